package orchestrate

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/brinesalt/brine/client"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/master"
	"github.com/brinesalt/brine/sshexec/sshrun"
)

// cmdRequest is one saltutil.cmd call from a `salt` state.
type cmdRequest struct {
	tgt       any
	tgtType   string
	fun       string
	arg       []any
	kwarg     *ordered.Map
	ret       string
	retConfig string
	retKwargs *ordered.Map
	timeout   time.Duration // 0: the master's timeout
	batch     string
	subset    int
	ssh       bool
	roster    string
	failhard  bool
	// expectMinions reports minions that never returned as
	// {"failed": True} (LocalClient.get_iter_returns expect_minions).
	expectMinions bool
}

// eventArgs is the cmd_kw saltmod fires in salt/run/<jid>/args.
func (q *cmdRequest) eventArgs() *ordered.Map {
	m := ordered.FromPairs("arg", orList(q.arg), "kwarg", q.kwarg, "ret", q.ret, "timeout", nil,
		"tgt_type", q.tgtType, "ssh", q.ssh, "expect_minions", q.expectMinions)
	if q.timeout > 0 {
		m.Set("timeout", q.timeout.Seconds())
	}
	if q.batch != "" {
		m.Set("batch", q.batch)
	}
	if q.failhard {
		m.Set("failhard", true)
	}
	return m
}

// pubArgs is the job's argument list: positional arguments, then the
// keywords as Salt's condition_input packs them, {"__kwarg__": True, ...}.
func (q *cmdRequest) pubArgs() []any {
	args := slices.Clone(orList(q.arg))
	if q.kwarg.Len() > 0 {
		kw := ordered.FromPairs("__kwarg__", true)
		q.kwarg.Range(func(k, v any) bool { kw.Set(k, v); return true })
		args = append(args, kw)
	}
	return args
}

// cmd is saltutil.cmd: the job on the targets, answered as {id: {"ret",
// "out", "retcode", "jid"}} (or {"failed": True} for a minion that never
// returned, when expected).
func (r *run) cmd(ctx context.Context, q *cmdRequest) (*ordered.Map, error) {
	if q.ssh {
		return r.sshCmd(ctx, q)
	}
	cfg := r.o.cfg.Master
	timeout := cfg.Timeout
	if q.timeout > 0 {
		timeout = q.timeout
	}
	ch, cancel := r.m.Bus().Subscribe()
	defer cancel()
	s := &client.Session{Pub: r.m, Events: ch, Timeout: timeout, GatherJobTimeout: cfg.GatherJobTimeout}
	p := master.PublishRequest{Tgt: q.tgt, TgtType: q.tgtType, Fun: q.fun, Arg: q.pubArgs(), Ret: q.ret,
		User: r.user, RetConfig: q.retConfig, RetKwargs: q.retKwargs}
	if q.batch != "" {
		return r.batchCmd(ctx, s, p, q)
	}
	if q.subset > 0 {
		var err error
		if p, err = s.Subset(ctx, p, q.subset); err != nil {
			return nil, err
		}
	}
	jid, minions, err := r.m.Publish(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("publish %s: %w", q.fun, err)
	}
	out := ordered.New()
	_, minions, err = s.Collect(ctx, jid, minions, p, func(id string, data *ordered.Map) {
		out.Set(id, minionRet(data, jid))
	})
	if err != nil {
		return out, err
	}
	if q.expectMinions {
		for _, id := range minions {
			if !out.Has(id) {
				out.Set(id, ordered.FromPairs("failed", true))
			}
		}
	}
	return out, nil
}

// minionRet is one minion's entry of cmd_iter's answer.
func minionRet(data *ordered.Map, jid string) *ordered.Map {
	m := ordered.FromPairs("ret", data.Value("return"))
	if o, ok := data.Get("out"); ok {
		m.Set("out", o)
	}
	if rc, ok := data.Get("retcode"); ok {
		m.Set("retcode", rc)
	}
	m.Set("jid", jid)
	return m
}

// batchCmd is saltutil._exec with batch: cmd_batch over the minions that
// answer a ping, each entry {"out": "highstate", "ret": return} (Salt's
// batch answer carries no retcode).
func (r *run) batchCmd(ctx context.Context, s *client.Session, p master.PublishRequest, q *cmdRequest) (*ordered.Map, error) {
	up, _, err := s.Ping(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("publish %s: %w", q.fun, err)
	}
	n, err := client.BatchSize(q.batch, len(up))
	if err != nil {
		return nil, err
	}
	out := ordered.New()
	entry := func(ret any) *ordered.Map {
		o := "highstate"
		if m, ok := ret.(*ordered.Map); ok {
			if s, ok := m.Value("out").(string); ok {
				o = s
			}
		}
		return ordered.FromPairs("out", o, "ret", ret)
	}
	b := &client.Batch{S: s, Req: p, N: n, Failhard: q.failhard,
		OnReturn:  func(id string, data *ordered.Map) { out.Set(id, entry(data.Value("return"))) },
		OnTimeout: func(id string) { out.Set(id, entry(ordered.New())) }}
	if len(up) == 0 {
		return out, nil
	}
	_, err = b.Run(ctx, up)
	return out, err
}

// sshCmd is saltutil.cmd with ssh=True: salt-ssh on the roster's hosts
// matching the target, in this process.
func (r *run) sshCmd(ctx context.Context, q *cmdRequest) (*ordered.Map, error) {
	if q.batch != "" || q.subset > 0 {
		return nil, fmt.Errorf("batch and subset are not supported with ssh: True")
	}
	set := sshrun.Settings{ConfigDir: r.o.cfg.ConfigDir, Target: sshrun.CommaList(q.tgt), TgtType: q.tgtType,
		Fun: q.fun, Arg: orList(q.arg), Kwarg: q.kwarg, JobArgs: q.pubArgs(), Roster: q.roster,
		Caller: r.user, Set: map[string]bool{}}
	if set.Roster == "" {
		set.Roster = "flat"
	}
	// salt-ssh's defaults for the scan roster (--scan-ports, --scan-timeout).
	set.ScanPorts, set.ScanTimeout = "22", 0.01
	if q.roster != "" {
		set.Set["roster"] = true
	}
	if q.timeout > 0 {
		set.Timeout = int(q.timeout.Seconds())
	}
	sr, err := sshrun.New(ctx, r.o.cfg.Master, set, r.o.cfg.Log)
	if err != nil {
		return nil, fmt.Errorf("salt-ssh: %w", err)
	}
	if err := sr.Select(ctx); err != nil {
		return nil, fmt.Errorf("salt-ssh: %w", err)
	}
	out := ordered.New()
	for res := range sr.Results(ctx) {
		if res.Err != nil {
			// A host that could not be reached or whose run broke has no
			// state return to judge: it counts as not returned.
			out.Set(res.ID, ordered.FromPairs("failed", true, "ret", res.Return, "jid", sr.JID()))
			continue
		}
		m := ordered.FromPairs("ret", res.Return, "retcode", res.Retcode, "jid", sr.JID())
		if res.Out != "" {
			m.Set("out", res.Out)
		}
		out.Set(res.ID, m)
	}
	return out, nil
}
