package minion

import (
	"context"
	"time"

	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/transport"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/thin"
	"github.com/brinesalt/brine/thin/frame"
)

var _ modules.MasterChannel = (*Minion)(nil)

// MasterRequest sends a load to the master and returns its answer, for
// the mine and publish modules (modules.MasterChannel). Each call has a
// request socket of its own, as Salt's modules open a ReqChannel each:
// a publish.runner waiting for its runner must not hold up the returns
// the runner is waiting for, which share the minion's socket.
func (m *Minion) MasterRequest(ctx context.Context, load *ordered.Map) (any, error) {
	rq := &transport.Req{Addr: m.req.Address()}
	defer rq.Close()
	return m.requestOn(ctx, rq, load, false)
}

// mineInterval is mine_interval (minutes, Salt's default 60), 0 when
// mine_enabled is off.
func (m *Minion) mineInterval() time.Duration {
	if v, ok := m.opts.Get("mine_enabled"); ok && !modules.Truthy(v) {
		return 0
	}
	minutes := 60.0
	switch v := m.opts.Value("mine_interval").(type) {
	case int:
		minutes = float64(v)
	case int64:
		minutes = float64(v)
	case float64:
		minutes = v
	}
	if minutes <= 0 {
		return 0
	}
	return time.Duration(minutes * float64(time.Minute))
}

// mineLoop is Salt's __mine_interval schedule entry (salt/minion.py
// _post_master_init): mine.update at start (run_on_start) and every
// mine_interval minutes. Its job is not returned to the master
// (mine_return_job defaults to False, and Brine does not return it).
func (m *Minion) mineLoop(ctx context.Context) {
	every := m.mineInterval()
	if every == 0 {
		return
	}
	if v, ok := m.opts.Get("mine_return_job"); ok && modules.Truthy(v) {
		m.log.Warn("mine_return_job is not supported: the mine.update jobs are not returned to the master")
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		m.runMineUpdate(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// runMineUpdate runs mine.update as a job of the minion's own.
func (m *Minion) runMineUpdate(ctx context.Context) {
	m.dataMu.RLock()
	fj := &frame.Job{JID: thin.NewJID(time.Now()), ID: m.id, Fun: "mine.update", Kwarg: ordered.New(), Opts: m.opts, Pillar: m.pillar}
	g := m.grains
	m.dataMu.RUnlock()
	var res *frame.Result
	if m.o.Execute != nil {
		res = m.o.Execute(ctx, fj)
	} else {
		res = thin.Execute(ctx, fj, m.jobOptions(ctx, g))
	}
	if res.Retcode != 0 {
		m.log.Warn("mine.update failed", logattr.Err, res.Return)
	}
}
