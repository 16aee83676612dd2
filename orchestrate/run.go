package orchestrate

import (
	"context"
	"slices"

	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/master"
	"github.com/brinesalt/brine/state/apply"
	"github.com/brinesalt/brine/state/coregrains"
	"github.com/brinesalt/brine/state/modules"
	_ "github.com/brinesalt/brine/state/modules/allmodules" // what orchestration templates may call
	"github.com/brinesalt/brine/state/states"
	_ "github.com/brinesalt/brine/state/states/allstates" // test.*, and the states an SLS may run on the master
)

// run is one orchestration: the master minion's environment (Salt's
// MasterMinion: the master's opts with file_client local, the master's
// grains, pillar compiled from pillar_roots) whose state registry holds
// the `salt` states bound to this master and jid.
type run struct {
	o    *orchestrator
	m    *master.Master
	id   string // the master minion's id, <id>_master
	jid  string // the orchestration's jid (__orchestration_jid__)
	user string
	env  *modules.Env
}

func (o *orchestrator) newRun(ctx context.Context, m *master.Master, jid string) *run {
	r := &run{o: o, m: m, id: m.ID(), jid: jid, user: localUser()}
	opts := o.masterOpts(r.id)
	st := states.Default.Clone()
	registerSalt(st, r)
	mods := modules.Default.CloneWithout("state")
	apply.Register(mods, st)
	r.env = &modules.Env{Opts: opts, Registry: mods, Log: o.cfg.Log, Context: map[string]any{}}
	r.env.SetGrainsFunc(func() *ordered.Map { return o.masterGrains(ctx, opts, r.id).Copy() })
	return r
}

// masterGrains are the master minion's grains, gathered on first use.
func (o *orchestrator) masterGrains(ctx context.Context, opts *ordered.Map, id string) *ordered.Map {
	o.grainsOnce.Do(func() {
		g, err := coregrains.Gather(ctx, coregrains.GatherOptions{Opts: opts})
		if err != nil || g == nil {
			o.cfg.Log.Warn("Unable to gather the master minion's grains", logattr.Err, err)
			g = ordered.New()
		}
		g.Set("id", id)
		o.grains = g
	})
	return o.grains
}

// masterOpts are the master minion's options: the master's config with
// its id, file and pillar roots, cachedir and file_client local
// (salt/runners/state.py sets file_client; salt/minion.py MasterMinion
// keeps the master's other options).
func (o *orchestrator) masterOpts(id string) *ordered.Map {
	cfg := o.cfg.Master
	opts := cfg.Raw.Copy()
	opts.Set("id", id)
	for key, roots := range map[string]map[string][]string{"file_roots": cfg.FileRoots, "pillar_roots": cfg.PillarRoots} {
		if opts.Has(key) {
			continue
		}
		envs := make([]string, 0, len(roots))
		for e := range roots {
			envs = append(envs, e)
		}
		slices.Sort(envs)
		m := ordered.New()
		for _, e := range envs {
			dirs := make([]any, len(roots[e]))
			for i, d := range roots[e] {
				dirs[i] = d
			}
			m.Set(e, dirs)
		}
		opts.Set(key, m)
	}
	opts.Set("cachedir", cfg.CacheDir)
	opts.Set("file_client", "local")
	opts.Set("__role", "master")
	return opts
}

// progress fires the runner's progress event, {"data": ret, "outputter":
// "highstate"} on salt/run/<jid>/progress, as orchestrate_single and
// orchestrate_high do through __jid_event__, and answers ret.
func (r *run) progress(ret *ordered.Map) *ordered.Map {
	if r.jid != "" {
		r.m.Bus().Fire("salt/run/"+r.jid+"/progress", ordered.FromPairs("data", ret, "outputter", "highstate"))
	}
	return ret
}

// fireArgs is salt.utils.event.fire_args: salt/run/<orchestration
// jid>/args with what a `salt` state is about to run.
func (r *run) fireArgs(data *ordered.Map) {
	if r.jid != "" {
		r.m.Bus().Fire("salt/run/"+r.jid+"/args", data)
	}
}
