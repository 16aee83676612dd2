package publish

import (
	"context"
	"log/slog"
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/state/modules"
)

func TestParseArgs(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want string
	}{
		{nil, "[]"}, {"ls -la /tmp", "['ls -la /tmp']"}, {"[a, 'k=v']", "['a', 'k=v']"}, {"3", "[3]"},
		{[]any{"x"}, "['x']"}, {"{a: 1}", "[{'a': 1}]"},
	} {
		if got := py.Repr(parseArgs(tc.in)); got != tc.want {
			t.Errorf("parseArgs(%s) = %s, want %s", py.Repr(tc.in), got, tc.want)
		}
	}
}

// Without a master, publish answers {} and runner Salt's message.
func TestWithoutMaster(t *testing.T) {
	env := &modules.Env{Opts: ordered.FromPairs("id", "m1"), Registry: modules.Default, Log: slog.New(slog.DiscardHandler)}
	ctx := context.Background()
	v, err := env.Run(ctx, "publish.publish", []any{"*", "test.ping"}, nil)
	if err != nil || py.Repr(v) != "{}" {
		t.Errorf("publish.publish = %v, %v", v, err)
	}
	v, err = env.Run(ctx, "publish.runner", []any{"manage.up"}, nil)
	if err != nil || v != "No access to master. If using salt-call with --local, please remove." {
		t.Errorf("publish.runner = %v, %v", v, err)
	}
}
