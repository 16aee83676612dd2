package master

import (
	"context"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
	"github.com/brinesalt/brine/state/apply"
)

// RunnerFunc is a runner function served by a package above the master
// (Options.Runners): it gets the master to publish, collect, run wheel
// and runner functions and fire events with.
type RunnerFunc func(ctx context.Context, m *Master, args []any, kw *ordered.Map) (any, error)

// RunJID is the jid of the runner job ctx belongs to ("" outside one):
// the orchestration runner's orchestration_jid.
func RunJID(ctx context.Context) string { return runJID(ctx) }

// WithRunJID makes ctx carry jid as its runner job's jid, for a runner
// that runs another runner's function inside its own job.
func WithRunJID(ctx context.Context, jid string) context.Context { return withRunJID(ctx, jid) }

// runnerSuccess is the success RunnerClient.low records for a return: a
// return with a "data" key (the orchestrate runner's envelope) succeeds
// when check_result passes on its data (salt/client/mixins.py), any
// other return succeeds.
func runnerSuccess(ret any) bool {
	m, ok := ret.(*ordered.Map)
	if !ok || !m.Has("data") {
		return true
	}
	return apply.CheckResult(m.Value("data"), false)
}

// RunnerJob runs runner function fun as a job of its own, as
// saltutil.runner's RunnerClient.cmd(full_return=True) does from an
// orchestration: a new jid, salt/run/<jid>/new and /ret, the job cache
// record, and the job's data ({fun, jid, user, fun_args, return,
// success}) as the answer. A function the master does not have is a
// failed job, not an error.
func (m *Master) RunnerJob(ctx context.Context, fun string, args []any, kw *ordered.Map, user string) *ordered.Map {
	data, _, _ := m.runRunnerData(ctx, protocol.NewJID(time.Now()), fun, args, kw, user, false)
	return data
}

// WheelJob runs wheel function fun as a job of its own (salt/wheel/<jid>
// events) for a caller inside the master, and answers the job's data
// ({fun, jid, user, return, success}), saltutil.wheel's full return.
func (m *Master) WheelJob(ctx context.Context, fun string, kw *ordered.Map, user string) *ordered.Map {
	if !m.HasWheel(fun) {
		e := &NoRunnerError{Fun: fun}
		return ordered.FromPairs("fun", "wheel."+fun, "return", e.Error(), "success", false)
	}
	out := m.runWheel(ctx, protocol.NewJID(time.Now()), fun, kw, user)
	if d, ok := out.Value("data").(*ordered.Map); ok {
		return d
	}
	return out
}
