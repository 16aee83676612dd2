package minion

import (
	"context"

	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/returners"
)

// returnerNames is the job's "ret" joined with the minion's own
// "return" option (a string or a list), as _thread_return adds the
// default returners from the minion config.
func (m *Minion) returnerNames(job *protocol.Job) string {
	return returners.Join(job.Ret, m.opts.Value("return"))
}

// returnerLoad is the ret dict _thread_return hands the returners:
// the job's return fields, the publication's ret_config and ret_kwargs,
// and the minion id last.
func returnerLoad(job *protocol.Job, r *protocol.Return) *ordered.Map {
	ret := ordered.FromPairs("success", r.Success, "return", r.Return, "retcode", r.Retcode)
	if r.Out != "" {
		ret.Set("out", r.Out)
	}
	ret.Set("jid", r.JID)
	ret.Set("fun", r.Fun)
	ret.Set("fun_args", r.FunArgs)
	if r.FunArgs == nil {
		ret.Set("fun_args", []any{})
	}
	if r.User != "" {
		ret.Set("user", r.User)
	}
	if r.MasterID != "" {
		ret.Set("master_id", r.MasterID)
	}
	if r.Metadata != nil {
		ret.Set("metadata", r.Metadata)
	}
	for _, k := range []string{"ret_config", "ret_kwargs"} {
		if v, ok := job.Kwargs.Get(k); ok {
			ret.Set(k, v)
		}
	}
	ret.Set("id", r.ID)
	return ret
}

// sendToReturners hands the return to the job's returners (salt
// --return) and the minion's configured ones; a failing returner is
// logged and never affects the return to the master.
func (m *Minion) sendToReturners(ctx context.Context, job *protocol.Job, r *protocol.Return) {
	m.sendReturners(ctx, m.returnerNames(job), job.JID, returnerLoad(job, r))
}

// sendReturners hands ret to the named returners (comma-separated) with
// the minion's options, grains and pillar; failures are logged.
func (m *Minion) sendReturners(ctx context.Context, names, jid string, ret *ordered.Map) {
	if names == "" {
		return
	}
	reg := m.o.Returners
	if reg == nil {
		reg = returners.Default
	}
	m.dataMu.RLock()
	pillar, grains := m.pillar, m.grains
	m.dataMu.RUnlock()
	env := (&modules.Env{Opts: m.opts, Pillar: pillar, Log: m.log, Context: map[string]any{}}).WithGrains(grains)
	for _, err := range reg.Send(ctx, env, names, ret) {
		m.log.Error("the return failed for a returner", logattr.JID, jid, logattr.Err, err)
	}
}
