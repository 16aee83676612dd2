package service

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/testsupport/pkgtest"
	"github.com/brinesalt/brine/state/modules/pkg/syscmd"
)

// TestRealSysV drives a real init script in /etc/init.d through service
// and update-rc.d.
func TestRealSysV(t *testing.T) {
	s := pkgtest.InstallInitScript(t)
	env := newEnv(ordered.FromPairs("os", "Debian", "os_family", "Debian", "init", "unknown"), &Module{Run: syscmd.Exec, Which: syscmd.Which})
	ctx := context.Background()
	run := func(fun string) any {
		t.Helper()
		got, err := env.Run(ctx, fun, []any{s.Name}, nil)
		if err != nil {
			t.Fatalf("%s: %v", fun, err)
		}
		return got
	}
	steps := []struct {
		fun  string
		want any
	}{
		{"service.available", true}, {"service.status", false}, {"service.enabled", false},
		{"service.start", true}, {"service.status", true}, {"service.reload", true}, {"service.restart", true},
		{"service.enable", true}, {"service.enabled", true}, {"service.disabled", false},
		{"service.disable", true}, {"service.enabled", false},
		{"service.stop", true}, {"service.status", false},
	}
	for _, st := range steps {
		if got := run(st.fun); got != st.want {
			t.Errorf("%s = %v, want %v", st.fun, got, st.want)
		}
	}
	if diff := cmp.Diff([]string{"start", "reload", "restart", "stop"}, s.Actions()); diff != "" {
		t.Errorf("script actions (-want +got):\n%s", diff)
	}
	got, err := env.Run(ctx, "service.get_all", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	all := got.([]any)
	found := false
	for _, n := range all {
		found = found || n == s.Name
	}
	if !found {
		t.Errorf("get_all lacks %s", s.Name)
	}
}
