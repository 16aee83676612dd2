package master

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/schedule"
)

// startSchedule runs the master's `schedule:` (and
// master.d/_schedule.conf): runner functions, evaluated every second
// (Salt's Maintenance shortens its loop to the shortest interval).
func (m *Master) startSchedule(ctx context.Context) {
	opt, _ := m.o.Raw.Value("schedule").(*ordered.Map)
	if opt.Len() == 0 {
		return
	}
	include, _ := m.o.Raw.Value("default_include").(string)
	if include == "" {
		include = "master.d/*.conf"
	}
	conf := ""
	if m.o.ConfDir != "" {
		conf = schedule.ConfFile(m.o.ConfDir, include)
	}
	s := schedule.New(schedule.Options{Schedule: opt, ConfFile: conf, LoopInterval: time.Second, Log: m.log, Exec: m.runScheduled})
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		s.Loop(ctx)
	}()
}

// masterID is the master's id option, Salt's default being the host
// name with _master.
func (m *Master) masterID() string {
	if id, ok := m.o.Raw.Value("id").(string); ok && id != "" {
		return id
	}
	h, _ := os.Hostname()
	return h + "_master"
}

// runScheduled is Schedule.handle_func on a master: the runner runs and
// its return is fired on the master bus as __schedule_return, the load
// a minion would send ({"cmd": "_return", …, "jid": "req"}). A returner
// named by the entry is not run on the master: Brine logs that.
func (m *Master) runScheduled(ctx context.Context, r schedule.Run) {
	funArgs := append([]any{}, r.Args...)
	if r.Kwargs != nil {
		funArgs = append(funArgs, r.Kwargs.Copy())
	}
	ret := ordered.FromPairs("id", m.masterID(), "fun", r.Fun, "fun_args", funArgs, "schedule", r.Name, "jid", r.JID, "pid", os.Getpid())
	kw := r.Kwargs
	if kw == nil {
		kw = ordered.New()
	}
	out, err := m.Runner(ctx, r.Fun, r.Args, kw)
	var missing *NoRunnerError
	switch {
	case errors.As(err, &missing):
		ret.Set("return", "'"+r.Fun+"' is not available.")
		ret.Set("success", false)
		ret.Set("retcode", 254)
	case err != nil:
		m.log.Error("Unhandled exception running "+r.Fun, "schedule", r.Name, logattr.Err, err)
		ret.Set("return", "Unhandled exception running "+r.Fun)
		ret.Set("success", false)
		ret.Set("retcode", 254)
	default:
		ret.Set("return", out)
		ret.Set("success", true)
	}
	if rt := r.Data.Value("returner"); rt != nil {
		m.log.Warn("schedule: returner on a master schedule is not supported by Brine; the return is only fired on the bus", "schedule", r.Name, "returner", rt)
	}
	if rj, ok := r.Data.Get("return_job"); ok && rj == false {
		return
	}
	load := ordered.FromPairs("cmd", "_return", "id", m.masterID())
	ret.Range(func(k, v any) bool {
		load.Set(k, v)
		return true
	})
	load.Set("jid", "req")
	m.bus.Fire("__schedule_return", load)
	m.log.Info("scheduled runner ran", "schedule", r.Name, "fun", r.Fun)
}
