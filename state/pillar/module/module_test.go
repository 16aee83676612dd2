package module

import (
	"context"
	"testing"

	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/ordered"
)

func TestGet(t *testing.T) {
	r := modules.NewRegistry()
	Register(r)
	env := &modules.Env{Registry: r, Context: map[string]any{}, Pillar: ordered.FromPairs(
		"app", ordered.FromPairs("db", ordered.FromPairs("host", "h"), "list", []any{"a", ordered.FromPairs("k", "v")}))}
	tests := []struct {
		args []any
		kw   *ordered.Map
		want string
	}{
		{[]any{"app:db:host"}, nil, `"h"`},
		{[]any{"app:list:1:k"}, nil, `"v"`},
		{[]any{"app:nope"}, nil, `""`},
		{[]any{"app:nope", "dflt"}, nil, `"dflt"`},
		{[]any{"app/db/host"}, ordered.FromPairs("delimiter", "/"), `"h"`},
		{[]any{"app:db"}, ordered.FromPairs("default", ordered.FromPairs("port", 1), "merge", true), `{"port":1,"host":"h"}`},
	}
	for _, tc := range tests {
		got, err := env.Run(context.Background(), "pillar.get", tc.args, tc.kw)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := ordered.FromPairs("v", got).MarshalJSON()
		if s := string(b); s != `{"v":`+tc.want+`}` {
			t.Errorf("pillar.get %v = %s, want %s", tc.args, s, tc.want)
		}
	}
}
