package core

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/state/modules"
)

func TestFunctions(t *testing.T) {
	r := modules.NewRegistry()
	for _, n := range []string{"test.ping", "test.providers", "test.try", "cmd.run", "grains.items",
		"state.apply", "sys.list_functions", "file.touch"} {
		r.Register(modules.Function{Name: n, Fn: func(context.Context, *modules.Call) (any, error) { return nil, nil }})
	}
	// A module that declines every host still counts: whether it applies
	// is the host's business, and both flavors ask the same question.
	r.SetVirtual("grains", func(*modules.Env) (bool, string) { return false, "no" })
	want := []string{"cmd.run", "grains.items", "test.ping"}
	if diff := cmp.Diff(want, Functions(r)); diff != "" {
		t.Errorf("Functions (-want +got):\n%s", diff)
	}
	for fun, ok := range map[string]bool{"test.ping": true, "cmd.run": true, "test.providers": false,
		"state.apply": false, "sys.list_functions": false, "cmd.nosuch": false, "": false} {
		if Runs(r, fun) != ok {
			t.Errorf("Runs(%q) = %v, want %v", fun, !ok, ok)
		}
	}
}
