package sys

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
)

// fresh builds a registry of its own, never touching modules.Default's
// contents, with the sys functions and a few fakes.
func fresh() *modules.Env {
	r := modules.NewRegistry()
	for _, n := range modules.Default.Names(&modules.Env{}) {
		if f, err := modules.Default.Lookup(&modules.Env{}, n); err == nil && len(n) > 4 && n[:4] == "sys." {
			r.Register(*f)
		}
	}
	noop := func(context.Context, *modules.Call) (any, error) { return nil, nil }
	r.Register(modules.Function{Name: "sysctl.get", Doc: "Get a sysctl.", Spec: modules.Spec{Params: []modules.Param{{Name: "name"}}}, Fn: noop})
	r.Register(modules.Function{Name: "test.retcode", Doc: "Set a retcode.", Spec: modules.Spec{Params: []modules.Param{{Name: "code", Default: 42, Optional: true}}}, Fn: noop})
	r.Register(modules.Function{Name: "test.arg", Doc: "Echo args.", Spec: modules.Spec{VarArgs: true, VarKw: true}, Fn: noop})
	return (&modules.Env{Registry: r, Opts: ordered.New(), Pillar: ordered.New(),
		Context: map[string]any{}, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}).WithGrains(ordered.New())
}

var cmpMap = cmp.Comparer(func(a, b *ordered.Map) bool {
	ja, _ := a.MarshalJSON()
	jb, _ := b.MarshalJSON()
	return string(ja) == string(jb)
})

func TestSys(t *testing.T) {
	tests := []struct {
		fun  string
		args []any
		want any
	}{
		{"sys.list_functions", []any{"test"}, []any{"test.arg", "test.retcode"}},
		{"sys.list_functions", []any{"sys"}, []any{"sys.argspec", "sys.doc", "sys.list_functions", "sys.list_modules", "sys.reload_modules"}},
		{"sys.list_functions", []any{"s*.get"}, []any{"sysctl.get"}},
		{"sys.list_functions", []any{"test.arg"}, []any{"test.arg"}},
		{"sys.list_modules", nil, []any{"sys", "sysctl", "test"}},
		{"sys.list_modules", []any{"sys"}, []any{"sys"}},
		{"sys.list_modules", []any{"s*"}, []any{"sys", "sysctl"}},
		{"sys.doc", []any{"test.retcode"}, ordered.FromPairs("test.retcode", "Set a retcode.")},
		{"sys.doc", []any{"sysctl"}, ordered.FromPairs("sysctl.get", "Get a sysctl.")},
		{"sys.argspec", []any{"test"}, ordered.FromPairs(
			"test.arg", ordered.FromPairs("args", nil, "defaults", nil, "varargs", true, "kwargs", true),
			"test.retcode", ordered.FromPairs("args", []any{"code"}, "defaults", []any{42}, "varargs", nil, "kwargs", nil))},
		{"sys.argspec", []any{"sysctl.get"}, ordered.FromPairs(
			"sysctl.get", ordered.FromPairs("args", []any{"name"}, "defaults", nil, "varargs", nil, "kwargs", nil))},
		{"sys.argspec", nil, ordered.New()},
	}
	for _, tt := range tests {
		t.Run(tt.fun, func(t *testing.T) {
			got, err := fresh().Run(context.Background(), tt.fun, tt.args, nil)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmpMap); diff != "" {
				t.Errorf("%s %v (-want +got):\n%s", tt.fun, tt.args, diff)
			}
		})
	}
}
