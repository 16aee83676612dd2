package apply

import (
	"context"
	"errors"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/states"
)

// PlanResult is what a state function would do, compiled but not run.
type PlanResult struct {
	// High is the rendered high data to run (with __exclude__ and
	// __extend__ still in it, as state.high takes it), Pillar the pillar
	// it was compiled with, Test the test flag of the run.
	High   *ordered.Map
	Pillar *ordered.Map
	Test   bool
	// Done is set when the function answered without needing a run:
	// show_* data, a compile error list, a pillar failure. Its retcode is
	// in the Env's Context, as for any call.
	Done    any
	HasDone bool
}

var errPlanned = errors.New("state run planned, not executed")

// Plan runs the state function fun as far as compiling: the controller
// side of state functions under salt-ssh. Salt renders SLS files on the
// master for salt-ssh too (salt/client/ssh/wrapper/state.py) and ships
// the result with the files it references; Brine ships the high data to
// the host's state.high. env carries the host's grains, the master's
// file_roots and pillar_roots in Opts, and a Registry whose functions
// run on the host (for salt[...] calls in templates).
func Plan(ctx context.Context, env *modules.Env, st *states.Registry, fun string, args []any, kwargs *ordered.Map) (*PlanResult, error) {
	plan := &PlanResult{}
	r := modules.NewRegistry()
	register(r, &module{states: st, plan: plan})
	f, err := r.Lookup(env, fun)
	if err != nil {
		return nil, err
	}
	c, err := f.Bind(env, args, kwargs)
	if err != nil {
		return nil, err
	}
	if env.Context == nil {
		env.Context = map[string]any{}
	}
	ret, err := f.Fn(ctx, c)
	switch {
	case errors.Is(err, errPlanned):
		return plan, nil
	case err != nil:
		return nil, err
	}
	plan.Done, plan.HasDone = ret, true
	return plan, nil
}
