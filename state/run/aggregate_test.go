package run_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
	_ "github.com/brinesalt/brine/state/modules/configmod" // config.option, copied into the test registry
	"github.com/brinesalt/brine/state/run"
	"github.com/brinesalt/brine/state/states"
	"github.com/brinesalt/brine/state/states/teststate"
)

// aggRegistry has an "agg" state module whose run() reports the names
// it was given, and whose mod_aggregate folds the names of the other
// agg chunks into `names` (as pkg's does into pkgs).
func aggRegistry() *states.Registry {
	st := states.NewRegistry()
	teststate.Register(st)
	st.Register(states.Function{Name: "agg.run", Spec: modules.Spec{Params: []modules.Param{{Name: "name"},
		{Name: "names", Optional: true}}, VarKw: true},
		Fn: func(_ context.Context, c *states.Call) (*states.Result, error) {
			return states.NewResult(c.Arg("name"), states.True, fmt.Sprintf("%v %v", c.Arg("name"), c.Arg("names"))), nil
		}})
	st.RegisterAggregate("agg", func(low *ordered.Map, chunks []*ordered.Map, ran func(string) bool) *ordered.Map {
		var names []any
		for _, c := range chunks {
			if c.Value("state") == "agg" && !c.Has("__agg__") && !ran(states.Tag(c)) {
				names = append(names, c.Value("name"))
				c.Set("__agg__", true)
			}
		}
		low.Set("names", names)
		return low
	})
	return st
}

func aggRun(t *testing.T, option any, sls string) []string {
	t.Helper()
	reg := modules.NewRegistry()
	opt, err := modules.Default.Lookup(&modules.Env{}, "config.option")
	if err != nil {
		t.Fatal(err)
	}
	reg.Register(*opt)
	opts := ordered.New()
	if option != nil {
		opts.Set("state_aggregate", option)
	}
	env := (&modules.Env{Registry: reg, Opts: opts, Pillar: ordered.New(), Context: map[string]any{}}).WithGrains(ordered.New())
	res, err := (&run.Runner{States: aggRegistry(), Env: env}).CallHigh(context.Background(), high(t, sls))
	if err != nil {
		t.Fatalf("CallHigh: %v", err)
	}
	var out []string
	res.Map().Range(func(k, v any) bool {
		out = append(out, fmt.Sprint(v.(*ordered.Map).Value("comment")))
		return true
	})
	return out
}

const aggSLS = `a:
  agg.run: []
between:
  test.nop: []
b:
  agg.run:
    - require:
      - test: between
c:
  agg.run: []
`

// TestStateAggregate checks when mod_aggregate runs: state_aggregate
// True or a list naming the module, or the chunk's own aggregate key;
// the first chunk takes the others' names and their requisites (so
// `between` runs first), and the others still run on their own.
func TestStateAggregate(t *testing.T) {
	folded := []string{"Success!", "a [b c]", "b <nil>", "c <nil>"}
	plain := []string{"a <nil>", "Success!", "b <nil>", "c <nil>"}
	tests := []struct {
		name   string
		option any
		sls    string
		want   []string
	}{
		{"off by default", nil, aggSLS, plain},
		{"state_aggregate True", true, aggSLS, folded},
		{"state_aggregate lists the module", []any{"pkg", "agg"}, aggSLS, folded},
		{"state_aggregate lists other modules", []any{"pkg"}, aggSLS, plain},
		// a opts out; b, under the option, takes c.
		{"a chunk's aggregate key wins", true, "a:\n  agg.run:\n    - aggregate: False\n" + aggSLS[len("a:\n  agg.run: []\n"):],
			[]string{"a <nil>", "Success!", "b [c]", "c <nil>"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmp.Diff(tc.want, aggRun(t, tc.option, tc.sls)); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}
