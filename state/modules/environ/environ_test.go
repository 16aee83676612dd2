package environ

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
)

func newEnv() *modules.Env {
	return (&modules.Env{Pillar: ordered.New(), Opts: ordered.New(),
		Registry: modules.Default, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Context: map[string]any{}}).WithGrains(ordered.New())
}

func TestEnviron(t *testing.T) {
	t.Setenv("BRINE_A", "1")
	t.Setenv("BRINE_B", "x")
	t.Setenv("BRINE_GONE", "y")
	env := newEnv()
	ctx := context.Background()
	tests := []struct {
		fun    string
		args   []any
		kwargs *ordered.Map
		want   string
	}{
		{"environ.get", []any{"BRINE_A"}, nil, `"1"`},
		{"environ.get", []any{"BRINE_NONE", "d"}, nil, `"d"`},
		{"environ.get", []any{5}, nil, `false`},
		{"environ.has_value", []any{"BRINE_A"}, nil, `true`},
		{"environ.has_value", []any{"BRINE_A", "2"}, nil, `false`},
		{"environ.has_value", []any{"BRINE_NONE"}, nil, `false`},
		{"environ.item", []any{[]any{"BRINE_A", "BRINE_NONE"}}, nil, `{"BRINE_A":"1","BRINE_NONE":""}`},
		{"environ.item", []any{"BRINE_B"}, nil, `{"BRINE_B":"x"}`},
		{"environ.setval", []any{"BRINE_C", "new"}, nil, `"new"`},
		{"environ.setval", []any{"BRINE_C", 3}, nil, `false`},
		{"environ.setval", []any{"BRINE_B", false}, nil, `""`},
		{"environ.setval", []any{"BRINE_B", false}, ordered.FromPairs("false_unsets", true), `null`},
		{"environ.setenv", []any{ordered.FromPairs("BRINE_D", "d", "BRINE_GONE", false)}, ordered.FromPairs("false_unsets", true),
			`{"BRINE_D":"d","BRINE_GONE":null}`},
		{"environ.setenv", []any{ordered.FromPairs("BRINE_E", 1)}, nil, `false`},
		{"environ.setenv", []any{"notadict"}, nil, `false`},
	}
	for _, tt := range tests {
		got, err := env.Run(ctx, tt.fun, tt.args, tt.kwargs)
		if err != nil {
			t.Fatalf("%s: %v", tt.fun, err)
		}
		b, _ := json.Marshal(got)
		if string(b) != tt.want {
			t.Errorf("%s%v = %s, want %s", tt.fun, tt.args, b, tt.want)
		}
	}
	if _, ok := os.LookupEnv("BRINE_B"); ok {
		t.Error("BRINE_B still set")
	}
	if _, ok := os.LookupEnv("BRINE_GONE"); ok {
		t.Error("BRINE_GONE still set")
	}
	os.Unsetenv("BRINE_C")
	os.Unsetenv("BRINE_D")
	all, _ := env.Run(ctx, "environ.items", nil, nil)
	if all.(*ordered.Map).Value("BRINE_A") != "1" {
		t.Error("items lacks BRINE_A")
	}
}
