package minion

import (
	"context"
	"errors"
	"regexp"
	"strings"

	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
	"github.com/brinesalt/brine/state/coregrains"
	"github.com/brinesalt/brine/state/modules/saltutil"
	"github.com/brinesalt/brine/state/target"
	"github.com/brinesalt/brine/thin"
	"github.com/brinesalt/brine/thin/frame"
)

// targeted is the minion-side match of a publication
// (Minion._target_load and the matchers): the target against the
// minion's id, grains and pillar.
func (m *Minion) targeted(job *protocol.Job) bool {
	kind, err := target.ParseKind(job.TgtType)
	if err != nil {
		return false
	}
	m.dataMu.RLock()
	self := &target.Minion{ID: m.id, Grains: m.grains, Pillar: m.pillar}
	m.dataMu.RUnlock()
	ok, err := target.Match(job.Tgt, kind, self, target.Options{Delimiter: job.Delimiter})
	if err != nil {
		m.log.Debug("target did not compile", "tgt", job.Tgt, "tgt_type", job.TgtType, logattr.Err, err)
		return false
	}
	return ok
}

// kwargRE is salt.utils.args.KWARG_REGEX: "name=value" on the command
// line is a keyword argument.
var kwargRE = regexp.MustCompile(`^([^\d\W][\w.-]*)=(?:[^=]|$)`)

// splitArgs is salt.minion.load_args_and_kwargs: dicts marked
// __kwarg__ and "k=v" strings become keyword arguments.
func splitArgs(in []any) ([]any, *ordered.Map) {
	args := []any{}
	kw := ordered.New()
	for _, a := range in {
		switch x := a.(type) {
		case *ordered.Map:
			if x.Value("__kwarg__") == true {
				x.Range(func(k, v any) bool {
					if ks := ordered.KeyString(k); ks != "__kwarg__" {
						kw.Set(ks, v)
					}
					return true
				})
				continue
			}
		case string:
			if kwargRE.MatchString(x) {
				k, v, _ := strings.Cut(x, "=")
				kw.Set(k, v)
				continue
			}
		}
		args = append(args, a)
	}
	return args, kw
}

// runJob runs one job (Minion._thread_return) and queues its return.
func (m *Minion) runJob(ctx context.Context, job *protocol.Job) {
	jctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	tgt, _ := job.Tgt.(string)
	done := saltutil.Jobs.Add(saltutil.Job{JID: job.JID, Fun: job.Fun, Arg: job.Arg, Tgt: tgt, TgtType: job.TgtType, User: job.User, Cancel: cancel})
	args, kw := splitArgs(job.Arg)
	if m.c.GrainsRefreshPreExec {
		// salt/minion.py _handle_decoded_payload reloads the grains
		// before the job with grains_refresh_pre_exec.
		if err := m.RefreshGrains(jctx); err != nil {
			m.log.Warn("grains", logattr.Err, err)
		}
	}
	var res *frame.Result
	if job.Fun == protocol.RecvRelayFun {
		ret, rc := m.recvRelay(ctx, jctx, job)
		res = &frame.Result{Return: ret, Retcode: rc}
	} else {
		res = m.execute(jctx, job.JID, job.Fun, args, kw)
	}
	done()
	if errors.Is(context.Cause(jctx), saltutil.ErrSignalled) {
		// saltutil.kill_job/term_job: Salt's job process dies by the
		// signal and returns nothing.
		m.log.Info("job stopped by a signal, no return", logattr.JID, job.JID)
		return
	}
	ret := &protocol.Return{ID: m.id, Success: res.Retcode == 0, Return: res.Return, Retcode: res.Retcode,
		JID: job.JID, Fun: job.Fun, FunArgs: job.Arg, User: job.User, MasterID: job.MasterID, Out: res.Out}
	if md, ok := job.Kwargs.Value("metadata").(*ordered.Map); ok {
		ret.Metadata = md
	}
	m.queueReturn(ctx, ret.SaltMap())
	m.sendToReturners(ctx, job, ret)
}

// execute runs one function with the minion's options, grains and
// pillar (Options.Execute, or thin.Execute).
func (m *Minion) execute(ctx context.Context, jid, fun string, args []any, kw *ordered.Map) *frame.Result {
	m.dataMu.RLock()
	fj := &frame.Job{JID: jid, ID: m.id, Fun: fun, Arg: args, Kwarg: kw, Opts: m.opts, Pillar: m.pillar}
	g := m.grains
	m.dataMu.RUnlock()
	if m.o.Execute != nil {
		return m.o.Execute(ctx, fj)
	}
	o := m.jobOptions(ctx, g)
	o.Logger = o.Logger.With(logattr.JID, jid)
	return thin.Execute(ctx, fj, o)
}

// jobOptions gives a job the minion's grains, the master's file server
// and pillar from the master, as Salt's minion loads its modules with
// file_client: remote. A minion configured with file_client: local
// keeps its own file_roots and pillar_roots (salt/minion.py with
// file_client local).
func (m *Minion) jobOptions(ctx context.Context, g *ordered.Map) thin.Options {
	o := thin.Options{Gather: func(context.Context, coregrains.GatherOptions) (*ordered.Map, error) {
		return g.Copy(), nil
	}, Minion: m, Logger: m.log}
	if fc, _ := m.opts.Value("file_client").(string); fc != "local" {
		o.Files = m.FileClient(ctx)
		o.Pillar = m.PillarSource(g)
	}
	return o
}

// queueReturn adds a return to the queue the sender drains.
func (m *Minion) queueReturn(ctx context.Context, load *ordered.Map) { m.rq.push(ctx, load) }

// sendReturns sends queued returns in order, retrying each every
// return_retry_timer (+ random up to return_retry_timer_max) while the
// master is unreachable, so no return is lost to a master restart. When
// ctx ends, what is left is written to disk for the next run.
func (m *Minion) sendReturns(ctx context.Context) {
	defer m.rq.persist()
	m.rq.restore()
	for {
		next := m.rq.peek()
		if next == nil {
			select {
			case <-ctx.Done():
				return
			case <-m.rq.wake:
			}
			continue
		}
		if _, err := m.request(ctx, next, false); err != nil {
			if ctx.Err() != nil {
				return
			}
			delay := m.c.ReturnRetryTimer
			if m.c.ReturnRetryTimerMax > delay {
				delay += jitter(m.c.ReturnRetryTimerMax - delay)
			}
			m.log.Warn("return not delivered, will retry", logattr.JID, next.Value("jid"), "master", m.req.Address(), "retry_in", delay.String(), logattr.Err, err)
			if sleep(ctx, delay) != nil {
				return
			}
			continue
		}
		m.rq.pop()
	}
}

// Pending is the number of returns waiting to be sent.
func (m *Minion) Pending() int { return m.rq.len() }
