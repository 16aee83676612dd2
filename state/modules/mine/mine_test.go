package mine

import (
	"context"
	"log/slog"
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/state/modules"
	_ "github.com/brinesalt/brine/state/modules/configmod"
	_ "github.com/brinesalt/brine/state/modules/test"
)

func TestParseDefinition(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want string
	}{
		{[]any{}, "['', [], {}, {}]"},
		{[]any{"eth0", ordered.FromPairs("cidr", "10.0.0.0/8"), ordered.FromPairs("mine_function", "network.ip_addrs")}, "['network.ip_addrs', ['eth0'], {'cidr': '10.0.0.0/8'}, {}]"},
		{ordered.FromPairs("mine_function", "test.echo", "text", "x", "allow_tgt", "web*", "allow_tgt_type", ""), "['test.echo', [], {'text': 'x'}, {'allow_tgt': 'web*'}]"},
	} {
		d := parseDefinition(tc.in)
		args := d.args
		if args == nil {
			args = []any{}
		}
		if got := py.Repr([]any{d.name, args, d.kwargs, d.acl}); got != tc.want {
			t.Errorf("parseDefinition(%s) = %s, want %s", py.Repr(tc.in), got, tc.want)
		}
	}
}

// TestMasterlessMine runs the module with file_client: local, where the
// mine is the datastore's mine_cache.
func TestMasterlessMine(t *testing.T) {
	ctx := context.Background()
	env := &modules.Env{Opts: ordered.FromPairs("id", "m1", "file_client", "local", "cachedir", t.TempDir(),
		"mine_functions", ordered.FromPairs("greeting", []any{ordered.FromPairs("mine_function", "test.echo"), "hello"})),
		Registry: modules.Default, Log: slog.New(slog.DiscardHandler), Pillar: ordered.New(), Context: map[string]any{}}
	env = env.WithGrains(ordered.FromPairs("id", "m1"))
	run := func(fun string, args []any, kw *ordered.Map) string {
		t.Helper()
		v, err := env.Run(ctx, fun, args, kw)
		if err != nil {
			t.Fatalf("%s: %v", fun, err)
		}
		return py.Repr(v)
	}
	steps := []struct {
		fun  string
		args []any
		kw   *ordered.Map
		want string
	}{
		{"mine.update", nil, nil, "True"},
		{"mine.get", []any{"m1", "greeting"}, nil, "{'m1': 'hello'}"},
		{"mine.get", []any{"other", "greeting"}, nil, "{}"},
		{"mine.send", []any{"pong", "one"}, ordered.FromPairs("mine_function", "test.arg_clean", "allow_tgt", "m1"), "True"},
		{"mine.get", []any{"*", "greeting,pong"}, nil, "{'greeting': {'m1': 'hello'}, 'pong': {'m1': {'args': ['one'], 'kwargs': {}}}}"},
		{"mine.valid", nil, nil, "{'greeting': {'test.echo': ['hello']}}"},
		{"mine.delete", []any{"greeting"}, nil, "True"},
		{"mine.get", []any{"m1", []any{"greeting", "pong"}}, nil, "{'pong': {'m1': {'args': ['one'], 'kwargs': {}}}}"},
		{"mine.flush", nil, nil, "True"},
		{"mine.get", []any{"m1", "pong"}, nil, "{}"},
		{"mine.update", nil, ordered.FromPairs("mine_functions", []any{"test.true"}), "True"},
		{"mine.get", []any{"m1", "test.true"}, nil, "{'m1': True}"},
	}
	for _, s := range steps {
		if got := run(s.fun, s.args, s.kw); got != s.want {
			t.Errorf("%s %s = %s, want %s", s.fun, py.Repr(s.args), got, s.want)
		}
	}
	env.Opts.Set("file_client", "remote")
	if _, err := env.Run(ctx, "mine.get", []any{"*", "x"}, nil); err == nil {
		t.Error("mine.get without a master succeeded")
	}
}
