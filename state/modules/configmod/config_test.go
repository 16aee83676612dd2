package configmod

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
)

func newEnv() *modules.Env {
	return (&modules.Env{
		Opts: ordered.FromPairs("id", "m1", "backup_mode", "minion", "shared", "opts",
			"dict", ordered.FromPairs("a", 1), "list", []any{"o"}, "mine.x", 1, "str", "s"),
		Pillar: ordered.FromPairs("shared", "pillar", "only_pillar", "p", "dict", ordered.FromPairs("c", 3), "list", []any{"p"},
			"master", ordered.FromPairs("only_master", "m", "mine.y", 2, "list", []any{"m"})),
		Registry: modules.Default, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Context: map[string]any{},
	}).WithGrains(ordered.FromPairs("os", "Debian", "shared", "grains", "nested", ordered.FromPairs("k", ordered.FromPairs("v", 2)),
		"dict", ordered.FromPairs("b", 2, "a", 0)))
}

func TestConfig(t *testing.T) {
	env := newEnv()
	ctx := context.Background()
	tests := []struct {
		fun    string
		args   []any
		kwargs *ordered.Map
		want   string
	}{
		{"config.get", []any{"shared"}, nil, `"opts"`},
		{"config.get", []any{"shared"}, ordered.FromPairs("omit_opts", true), `"grains"`},
		{"config.get", []any{"shared"}, ordered.FromPairs("omit_opts", true, "omit_grains", true), `"pillar"`},
		{"config.get", []any{"nested:k:v"}, nil, `2`},
		{"config.get", []any{"nested/k"}, ordered.FromPairs("delimiter", "/"), `{"v":2}`},
		{"config.get", []any{"only_master"}, nil, `"m"`},
		{"config.get", []any{"hosts.file"}, nil, `"/etc/hosts"`},
		{"config.get", []any{"virt:tunnel"}, nil, `false`},
		{"config.get", []any{"nope", "dflt"}, nil, `"dflt"`},
		{"config.get", []any{"dict"}, ordered.FromPairs("merge", "recurse"), `{"c":3,"b":2,"a":1}`},
		{"config.get", []any{"dict"}, ordered.FromPairs("merge", "overwrite"), `{"a":1}`},
		{"config.option", []any{"shared"}, nil, `"opts"`},
		{"config.option", []any{"nested:k"}, nil, `""`},
		{"config.option", []any{"test.foo"}, nil, `"unconfigured"`},
		{"config.option", []any{"shared"}, ordered.FromPairs("omit_all", true, "default", "d"), `"d"`},
		{"config.option", []any{"mine.*"}, ordered.FromPairs("wildcard", true), `{"mine.y":2,"mine.x":1}`},
		{"config.option", []any{"zzz*"}, ordered.FromPairs("wildcard", true), `{}`},
		{"config.merge", []any{"list"}, nil, `["o","m","p"]`},
		{"config.merge", []any{"dict"}, nil, `{"c":3,"a":1}`},
		{"config.merge", []any{"str"}, nil, `"s"`},
		{"config.merge", []any{"redis.port"}, nil, `6379`},
		{"config.dot_vals", []any{"mine"}, nil, `{"mine.y":2,"mine.x":1}`},
		{"config.valid_fileproto", []any{"salt://a/b"}, nil, `true`},
		{"config.valid_fileproto", []any{"https://x"}, nil, `true`},
		{"config.valid_fileproto", []any{"/etc/x"}, nil, `false`},
		{"config.valid_fileproto", []any{"gopher://x"}, nil, `false`},
		{"config.backup_mode", nil, nil, `"minion"`},
		{"config.backup_mode", []any{"other"}, nil, `"other"`},
		{"config.manage_mode", []any{644}, nil, `"0644"`},
		{"config.manage_mode", []any{"0o755"}, nil, `"0755"`},
		{"config.manage_mode", []any{nil}, nil, `null`},
	}
	for _, tt := range tests {
		got, err := env.Run(ctx, tt.fun, tt.args, tt.kwargs)
		if err != nil {
			t.Fatalf("%s: %v", tt.fun, err)
		}
		b, _ := json.Marshal(got)
		if diff := cmp.Diff(tt.want, string(b)); diff != "" {
			t.Errorf("%s%v %v: %s", tt.fun, tt.args, tt.kwargs, diff)
		}
	}
	if env.Grains().Value("dict").(*ordered.Map).Len() != 2 {
		t.Error("merge mutated grains")
	}
}

func TestNilData(t *testing.T) {
	env := &modules.Env{Registry: modules.Default, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for _, kw := range []*ordered.Map{nil, ordered.FromPairs("merge", "recurse"), ordered.FromPairs("merge", "overwrite")} {
		got, err := env.Run(context.Background(), "config.get", []any{"hosts.file"}, kw)
		if err != nil || got != "/etc/hosts" {
			t.Errorf("config.get %v = %v, %v", kw, got, err)
		}
	}
	if got, _ := env.Run(context.Background(), "config.option", []any{"x"}, nil); got != "" {
		t.Errorf("option = %v", got)
	}
}
