package minion

import (
	"context"
	"strings"

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
	names := job.Ret
	var own string
	switch x := m.opts.Value("return").(type) {
	case string:
		own = x
	case []any:
		parts := make([]string, 0, len(x))
		for _, p := range x {
			if s, ok := p.(string); ok {
				parts = append(parts, s)
			}
		}
		own = strings.Join(parts, ",")
	}
	if own != "" {
		if names != "" {
			names += ","
		}
		names += own
	}
	return names
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
	names := m.returnerNames(job)
	if names == "" {
		return
	}
	reg := m.o.Returners
	if reg == nil {
		reg = returners.Default
	}
	m.dataMu.RLock()
	m.dataMu.RLock()
	pillar, grains := m.pillar, m.grains
	m.dataMu.RUnlock()
	env := (&modules.Env{Opts: m.opts, Pillar: pillar, Log: m.log, Context: map[string]any{}}).WithGrains(grains)
	m.dataMu.RUnlock()
	for _, err := range reg.Send(ctx, env, names, returnerLoad(job, r)) {
		m.log.Error("the return failed for a returner", logattr.JID, job.JID, logattr.Err, err)
	}
}
