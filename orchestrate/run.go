package orchestrate

import (
	"context"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/master"
	"github.com/brinesalt/brine/state/apply"
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
	cfg := o.cfg.Master
	opts := master.MinionOpts(cfg.Raw, r.id, cfg.FileRoots, cfg.PillarRoots, cfg.CacheDir)
	st := states.Default.Clone()
	registerSalt(st, r)
	mods := modules.Default.CloneWithout("state")
	apply.Register(mods, st)
	r.env = &modules.Env{Opts: opts, Registry: mods, Log: o.cfg.Log, Context: map[string]any{}}
	r.env.SetGrainsFunc(func() *ordered.Map { return o.grains.Get(ctx, opts, o.cfg.Log).Copy() })
	return r
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
