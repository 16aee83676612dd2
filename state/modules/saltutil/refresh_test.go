package saltutil

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
)

// fakeMinion records the refreshes asked of it and fails with err.
type fakeMinion struct {
	calls []string
	err   error
}

func (f *fakeMinion) RefreshPillar(context.Context) error {
	f.calls = append(f.calls, "pillar")
	return f.err
}

func (f *fakeMinion) RefreshGrains(context.Context) error {
	f.calls = append(f.calls, "grains")
	return f.err
}

// TestRefresh checks that the refresh functions reach the running
// minion and report whether the refresh happened: False with no minion
// (salt-call, salt-ssh) or when the minion could not refresh, never a
// True for nothing done.
func TestRefresh(t *testing.T) {
	for _, tc := range []struct {
		fun   string
		kw    *ordered.Map
		calls []string
	}{
		{"saltutil.refresh_pillar", nil, []string{"pillar"}},
		{"saltutil.pillar_refresh", ordered.FromPairs("wait", true, "timeout", 5), []string{"pillar"}},
		{"saltutil.refresh_grains", nil, []string{"pillar"}},
		{"saltutil.refresh_grains", ordered.FromPairs("refresh_pillar", false), []string{"grains"}},
		{"saltutil.refresh_modules", nil, []string{"grains"}},
		{"saltutil.sync_grains", nil, []string{"pillar"}},
		{"saltutil.sync_grains", ordered.FromPairs("refresh", false), nil},
		{"saltutil.sync_all", nil, []string{"pillar"}},
	} {
		name := tc.fun + " " + js(t, tc.kw)
		sync := strings.HasPrefix(tc.fun, "saltutil.sync_")
		t.Run(name+" running", func(t *testing.T) {
			env, _ := newEnv(t)
			fm := &fakeMinion{}
			env.Minion = fm
			got := run(t, env, tc.fun, nil, tc.kw)
			if !sync && got != true {
				t.Errorf("returned %v, want True", got)
			}
			if d := cmp.Diff(tc.calls, fm.calls); d != "" {
				t.Errorf("refreshes (-want +got):\n%s", d)
			}
		})
		if sync {
			continue
		}
		t.Run(name+" failing", func(t *testing.T) {
			env, _ := newEnv(t)
			env.Minion = &fakeMinion{err: errors.New("master down")}
			if got := run(t, env, tc.fun, nil, tc.kw); got != false {
				t.Errorf("returned %v after a failed refresh, want False", got)
			}
		})
		t.Run(name+" no minion", func(t *testing.T) {
			env, _ := newEnv(t)
			if got := run(t, env, tc.fun, nil, tc.kw); got != false {
				t.Errorf("returned %v with no minion to refresh, want False", got)
			}
		})
	}
	env, _ := newEnv(t)
	env.Minion = &fakeMinion{}
	_, err := env.Run(context.Background(), "saltutil.refresh_grains", nil, ordered.FromPairs("bogus", 1))
	var inv *modules.InvocationError
	if !errors.As(err, &inv) || !strings.Contains(err.Error(), "The following keyword arguments are not valid: bogus=1") {
		t.Errorf("refresh_grains bogus=1: %v", err)
	}
}
