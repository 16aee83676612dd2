package sshrun

import (
	"context"
	"fmt"
	"sync"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/sshexec"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/modules/mine"
)

// MineGetFun is salt-ssh's mine.get (salt/client/ssh/wrapper/mine.py):
// salt-ssh hosts keep no mine, so it runs the function on the hosts tgt
// matches in the roster, with the arguments their mine_functions give
// (roster entry, then pillar, then master config), and answers
// {host: return}.
const MineGetFun = "mine.get"

// mineArgs are mine.get's arguments: get(tgt, fun, tgt_type="glob",
// roster="flat").
type mineArgs struct {
	tgt, fun, tgtType, roster string
}

func parseMineArgs(args []any, kw *ordered.Map) (mineArgs, error) {
	a := mineArgs{tgtType: "glob", roster: "flat"}
	names := []string{"tgt", "fun", "tgt_type", "roster"}
	dst := []*string{&a.tgt, &a.fun, &a.tgtType, &a.roster}
	if len(args) > len(names) {
		return a, fmt.Errorf("mine.get takes at most 4 arguments (%d given)", len(args))
	}
	for i, v := range args {
		*dst[i] = ordered.KeyString(v)
	}
	for i, n := range names {
		if v, ok := kw.Get(n); ok && v != nil {
			*dst[i] = ordered.KeyString(v)
		}
	}
	if a.tgt == "" || a.fun == "" {
		return a, fmt.Errorf("mine.get needs tgt and fun")
	}
	return a, nil
}

// minePlan answers mine.get on every host of the run with one nested
// run, made once.
func (sr *Run) minePlan(args []any, kw *ordered.Map) func(context.Context, *sshexec.Host) (*sshexec.Plan, error) {
	var once sync.Once
	var ret any
	var err error
	return func(ctx context.Context, _ *sshexec.Host) (*sshexec.Plan, error) {
		once.Do(func() { ret, err = sr.mineGet(ctx, args, kw) })
		if err != nil {
			return &sshexec.Plan{Done: true, Return: err.Error(), Retcode: 1}, nil
		}
		return &sshexec.Plan{Done: true, Return: ret}, nil
	}
}

// mineGet runs the nested salt-ssh of mine.get; template calls reach it
// through the state wrapper.
func (sr *Run) mineGet(ctx context.Context, args []any, kw *ordered.Map) (any, error) {
	a, err := parseMineArgs(args, kw)
	if err != nil {
		return nil, err
	}
	s := sr.s
	s.Target, s.TgtType, s.Roster = a.tgt, a.tgtType, a.roster
	s.Fun, s.Arg, s.Kwarg, s.JID, s.Raw = a.fun, nil, ordered.New(), "", false
	nested, err := New(ctx, sr.cfg, s, sr.log)
	if err != nil {
		return nil, fmt.Errorf("mine.get %s: %w", a.tgt, err)
	}
	if err := nested.Select(ctx); err != nil {
		return nil, fmt.Errorf("mine.get %s: %w", a.tgt, err)
	}
	nested.job.Plan = nested.mineFunction(a.fun)
	out := ordered.New()
	// Salt's run_iter: no job of its own in the job cache.
	for r := range nested.exec.Run(ctx, nested.targets, nested.job) {
		hr := HostReturn(r)
		if m, ok := hr.(*ordered.Map); ok && m.Has("return") {
			out.Set(r.ID, m.Value("return"))
			continue
		}
		out.Set(r.ID, hr)
	}
	return out, nil
}

// mineFunction plans fun on a host as its mine_functions entry says
// (Single.run_wfunc with mine=True): the roster's, else the host's
// pillar's, else the master config's; without one, fun with no
// arguments.
func (sr *Run) mineFunction(fun string) func(context.Context, *sshexec.Host) (*sshexec.Plan, error) {
	return func(ctx context.Context, h *sshexec.Host) (*sshexec.Plan, error) {
		def, found := h.Target.MineFunctions.Get(fun)
		if !found {
			grains, err := h.Grains(ctx)
			if err != nil {
				return nil, fmt.Errorf("learn the grains of %s: %w", h.Target.ID, err)
			}
			p, err := sr.hostPillar(ctx, *h.Target, grains)
			if err != nil {
				return nil, fmt.Errorf("compile the pillar of %s: %w", h.Target.ID, err)
			}
			if mf, ok := p.Value("mine_functions").(*ordered.Map); ok {
				def, found = mf.Get(fun)
			}
		}
		if !found {
			if mf, ok := sr.cfg.Raw.Value("mine_functions").(*ordered.Map); ok {
				def, found = mf.Get(fun)
			}
		}
		plan := &sshexec.Plan{Fun: fun, Kwarg: ordered.New()}
		if found {
			name, args, kwargs, _ := mine.ParseDefinition(def)
			if name != "" {
				plan.Fun = name
			}
			plan.Arg, plan.Kwarg = args, kwargs
		}
		return plan, nil
	}
}

// mineCall is mine.get for templates rendered on the controller.
func (sr *Run) mineCall(ctx context.Context, c *modules.Call) (any, error) {
	return sr.mineGet(ctx, c.VarArgs, c.Kwargs)
}
