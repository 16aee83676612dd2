package minion

import (
	"context"
	"errors"
	"os"

	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
	"github.com/brinesalt/brine/internal/schedule"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/modules/saltutil"
	"github.com/brinesalt/brine/state/returners"
)

var _ schedule.Provider = (*Minion)(nil)

// Schedule is the minion's scheduler, which the schedule execution
// module manages (nil before Run).
func (m *Minion) Schedule() *schedule.Schedule {
	m.schedMu.Lock()
	defer m.schedMu.Unlock()
	return m.sched
}

// newSchedule builds the scheduler over the `schedule:` option (which
// includes minion.d/_schedule.conf) and the pillar's `schedule:`.
func (m *Minion) newSchedule() *schedule.Schedule {
	opt, _ := m.opts.Value("schedule").(*ordered.Map)
	include, _ := m.opts.Value("default_include").(string)
	if include == "" {
		include = "minion.d/*.conf"
	}
	loop := m.loopInterval()
	s := schedule.New(schedule.Options{
		Schedule: opt, ConfFile: schedule.ConfFile(m.c.Dir, include), LoopInterval: loop,
		Log: m.log, Exec: m.runScheduled,
		Whens: func() (*ordered.Map, *ordered.Map) {
			m.dataMu.RLock()
			defer m.dataMu.RUnlock()
			p, _ := m.pillar.Value("whens").(*ordered.Map)
			g, _ := m.grains.Value("whens").(*ordered.Map)
			return p, g
		},
	})
	m.schedMu.Lock()
	m.sched = s
	m.schedMu.Unlock()
	m.schedulePillar()
	return s
}

// schedulePillar hands the pillar's schedule to the scheduler after a
// pillar refresh.
func (m *Minion) schedulePillar() {
	s := m.Schedule()
	if s == nil {
		return
	}
	m.dataMu.RLock()
	v := m.pillar.Value("schedule")
	m.dataMu.RUnlock()
	if err := s.SetPillar(v); err != nil {
		m.log.Error("pillar schedule ignored", logattr.Err, err)
	}
}

// runScheduled is Schedule.handle_func on a minion: the function runs,
// the returners named by the entry's returner and schedule_returner get
// the return, and unless return_job is false the return goes to the
// master as a _return (jid "req" when no returner has the jid, so the
// master gives it one and stores a load; "nocache" with return_job:
// nocache), which the job cache lists with its `schedule` key.
func (m *Minion) runScheduled(ctx context.Context, r schedule.Run) {
	funArgs := append([]any{}, r.Args...)
	if r.Kwargs != nil {
		funArgs = append(funArgs, r.Kwargs.Copy())
	}
	ret := ordered.FromPairs("id", m.id, "fun", r.Fun, "fun_args", funArgs, "schedule", r.Name, "jid", r.JID)
	if md, ok := r.Data.Value("metadata").(*ordered.Map); ok {
		ret.Set("metadata", md)
	}
	ret.Set("pid", os.Getpid())
	// Listed by saltutil.running, as Salt's proc file for a job with
	// jid_include, so disable_during_state_run sees scheduled states.
	jctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	done := saltutil.Jobs.Add(saltutil.Job{JID: r.JID, Fun: r.Fun, Arg: funArgs, Tgt: m.id, TgtType: "glob", Cancel: cancel})
	res := m.execute(jctx, r.JID, r.Fun, r.Args, r.Kwargs)
	done()
	if errors.Is(context.Cause(jctx), saltutil.ErrSignalled) {
		m.log.Info("scheduled job stopped by a signal, no return", logattr.JID, r.JID)
		return
	}
	ret.Set("return", res.Return)
	ret.Set("retcode", res.Retcode)
	ret.Set("success", res.Retcode == 0)
	names := returners.Join(r.Data.Value("returner"), m.opts.Value("schedule_returner"))
	if names != "" {
		rr := ret.Copy()
		for _, k := range []string{"return_config", "return_kwargs"} {
			if v, ok := r.Data.Get(k); ok {
				rr.Set("ret_"+k[len("return_"):], v)
			}
		}
		m.sendReturners(ctx, names, r.JID, rr)
	}
	rj, hasRJ := r.Data.Get("return_job")
	if hasRJ && rj != "nocache" && !modules.Truthy(rj) {
		return
	}
	load := ordered.FromPairs("cmd", protocol.CmdReturn, "id", m.id)
	ret.Range(func(k, v any) bool {
		load.Set(k, v)
		return true
	})
	if names == "" {
		load.Set("jid", "req")
		if rj == "nocache" {
			load.Set("jid", "nocache")
		}
	}
	if res.Out != "" {
		load.Set("out", res.Out)
	}
	m.log.Info("Returning information for job: "+r.JID, "schedule", r.Name)
	m.queueReturn(ctx, load)
}
