package grains

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
)

type fakeMinion struct{ calls []string }

func (f *fakeMinion) RefreshPillar(context.Context) error {
	f.calls = append(f.calls, "pillar")
	return nil
}

func (f *fakeMinion) RefreshGrains(context.Context) error {
	f.calls = append(f.calls, "grains")
	return nil
}

// TestSetRefreshes checks that setting grains has the running minion
// refresh, as Salt's setvals ends with saltutil.refresh_grains: its
// pillar too unless refresh_pillar=False, and nothing with --local.
func TestSetRefreshes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fun   string
		args  []any
		kw    *ordered.Map
		local bool
		want  []string
	}{
		{"setval", "grains.setval", []any{"role", "db"}, nil, false, []string{"pillar"}},
		{"setval no pillar", "grains.setval", []any{"role", "db"}, ordered.FromPairs("refresh_pillar", false), false, []string{"grains"}},
		{"setvals", "grains.setvals", []any{ordered.FromPairs("a", 1, "b", 2)}, nil, false, []string{"pillar"}},
		{"append", "grains.append", []any{"roles2", "x"}, nil, false, []string{"pillar"}},
		{"delkey", "grains.delkey", []any{"os"}, nil, false, []string{"pillar"}},
		{"local", "grains.setval", []any{"role", "db"}, nil, true, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := newEnv(t)
			fm := &fakeMinion{}
			env.Minion = fm
			if tc.local {
				env.Opts.Set("local", true)
			}
			if _, err := env.Run(context.Background(), tc.fun, tc.args, tc.kw); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, fm.calls); d != "" {
				t.Errorf("refreshes (-want +got):\n%s", d)
			}
		})
	}
}
