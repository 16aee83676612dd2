package wrapper

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/roster"
	"github.com/brinesalt/brine/sshexec"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/states"
)

// TestPlanMoreStateFunctions plans the state functions salt-ssh's
// wrapper also offers: state.top ships the other top file's high data to
// the host's state.high with the highstate outputter; show_states and
// id_exists answer on the controller with data for the caller's
// outputter.
func TestPlanMoreStateFunctions(t *testing.T) {
	root := t.TempDir()
	for name, body := range map[string]string{
		"top.sls":     "base:\n  '*':\n    - a\n",
		"alt_top.sls": "base:\n  '*':\n    - c\n",
		"a.sls":       "a1:\n  test.nop: []\n",
		"c.sls":       "c1:\n  test.nop: []\n",
	} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h := &sshexec.Host{Target: &roster.Target{ID: "web1"},
		Grains: func(context.Context) (*ordered.Map, error) { return ordered.FromPairs("id", "web1"), nil },
		Call: func(_ context.Context, fun string, _ []any, _ *ordered.Map) (any, int, error) {
			t.Errorf("%s ran on the host while planning", fun)
			return nil, 0, nil
		}}
	s := &States{Opts: ordered.FromPairs("file_roots", ordered.FromPairs("base", []any{root})), States: states.NewRegistry(), Funcs: modules.NewRegistry()}
	plan := func(fun string, args ...any) *sshexec.Plan {
		t.Helper()
		if !IsState(fun) {
			t.Fatalf("IsState(%s) = false", fun)
		}
		p, err := s.Plan(fun, args, ordered.New())(context.Background(), h)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	top := plan("state.top", "alt_top.sls")
	if top.Done || top.Fun != "state.high" || top.Out != "highstate" {
		t.Fatalf("state.top plan = %+v", top)
	}
	if high := top.Arg[0].(*ordered.Map); !high.Has("c1") || high.Has("a1") {
		t.Errorf("state.top ships %v", high.Keys())
	}
	shown := plan("state.show_states")
	if d := cmp.Diff(&sshexec.Plan{Done: true, Return: []any{"a"}}, shown); d != "" {
		t.Errorf("state.show_states plan (-want +got):\n%s", d)
	}
	exists := plan("state.id_exists", "a1", "a")
	if !exists.Done || exists.Return != true || exists.Out != "" {
		t.Errorf("state.id_exists plan = %+v", exists)
	}
}
