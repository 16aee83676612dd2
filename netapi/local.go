package netapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/brinesalt/brine/client"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/master"
)

// localKeys are the lowstate keys the local clients read
// (LocalClient.cmd, run_job, cmd_batch and cmd_subset's parameters and
// the pub kwargs Brine's master takes).
var localKeys = []string{"client", "tgt", "fun", "arg", "kwarg", "tgt_type", "expr_form", "ret", "jid", "timeout",
	"gather_job_timeout", "full_return", "delimiter", "metadata", "ret_config", "ret_kwargs", "token", "eauth",
	"username", "password", "batch", "batch_wait", "failhard", "raw", "subset", "cli", "progress"}

// local runs the local, local_async, local_batch and local_subset
// clients.
func (s *Server) local(ctx context.Context, name string, chunk *ordered.Map, creds master.Creds) (any, error) {
	s.warnUnused(name, chunk, localKeys)
	req, err := publishRequest(chunk, creds)
	if err != nil {
		return nil, err
	}
	if name == "local_async" {
		return s.localAsync(ctx, req)
	}
	sess := s.jobSession(chunk)
	defer sess.Close()
	switch name {
	case "local_subset":
		n, err := intOpt(chunk, "subset", 3)
		if err != nil {
			return nil, err
		}
		if req, err = sess.Subset(ctx, req, n); err != nil {
			return nil, s.jobErr(err)
		}
	case "local_batch":
		return s.localBatch(ctx, sess.Session, req, chunk)
	}
	return s.localCmd(ctx, sess.Session, req, truthy(chunk.Value("full_return")))
}

// publishRequest is LocalClient.run_job's load from a chunk: tgt and fun
// are required (Salt's TypeError, a 500), arg and kwarg are joined as
// condition_input does, and expr_form (what pepper 0.5.5 sends) stands
// for tgt_type when that is absent.
func publishRequest(chunk *ordered.Map, creds master.Creds) (master.PublishRequest, error) {
	for _, k := range []string{"tgt", "fun"} {
		if !chunk.Has(k) {
			return master.PublishRequest{}, fmt.Errorf("cmd() missing 1 required positional argument: '%s'", k)
		}
	}
	fun, ok := chunk.Value("fun").(string)
	if !ok {
		return master.PublishRequest{}, fmt.Errorf("fun %v: not a function name", chunk.Value("fun"))
	}
	tgtType := str(chunk.Value("tgt_type"))
	if tgtType == "" {
		tgtType = str(chunk.Value("expr_form"))
	}
	if tgtType == "" {
		tgtType = "glob"
	}
	args, _ := chunk.Value("arg").([]any)
	req := master.PublishRequest{Tgt: chunk.Value("tgt"), TgtType: tgtType, Fun: fun, Arg: conditionInput(args, chunk.Value("kwarg")),
		Ret: str(chunk.Value("ret")), JID: str(chunk.Value("jid")), Delimiter: str(chunk.Value("delimiter")),
		RetConfig: str(chunk.Value("ret_config")), Auth: creds}
	req.Metadata, _ = chunk.Value("metadata").(*ordered.Map)
	req.RetKwargs, _ = chunk.Value("ret_kwargs").(*ordered.Map)
	return req, nil
}

// conditionInput is salt.utils.args.condition_input: a non-empty kwarg
// dict goes last, marked with __kwarg__.
func conditionInput(args []any, kwarg any) []any {
	out := append([]any{}, args...)
	kw, ok := kwarg.(*ordered.Map)
	if !ok || kw.Len() == 0 {
		return out
	}
	m := ordered.FromPairs("__kwarg__", true)
	kw.Range(func(k, v any) bool { m.Set(k, v); return true })
	return append(out, m)
}

// localAsync is LocalClient.run_job: {"jid", "minions"}, or {} when the
// target matches nothing (_check_pub_data) — except on a master of
// masters, where the lower tiers may match: {"jid", "minions": []}.
func (s *Server) localAsync(ctx context.Context, req master.PublishRequest) (any, error) {
	jid, minions, err := s.pool.Publish(ctx, req)
	if err != nil {
		return nil, authErr(err)
	}
	if len(minions) == 0 && !s.orderMasters(ctx) {
		return ordered.New(), nil
	}
	return ordered.FromPairs("jid", jid, "minions", strList(minions)), nil
}

// localCmd is LocalClient.cmd: publish, collect the returns as the salt
// command does, and answer {id: return} (full_return: {id: {"ret",
// "out", "retcode", "jid"}}), False for a minion that did not return.
func (s *Server) localCmd(ctx context.Context, sess *client.Session, req master.PublishRequest, full bool) (any, error) {
	jid, minions, err := sess.Pub.Publish(ctx, req)
	if err != nil {
		return nil, authErr(err)
	}
	out := ordered.New()
	if len(minions) == 0 && !sess.OrderMasters(ctx) {
		return out, nil
	}
	_, minions, err = sess.Collect(ctx, jid, minions, req, func(id string, data *ordered.Map) {
		out.Set(id, minionReturn(data, full))
	})
	if err != nil && !foundNoMore(err) {
		return nil, s.jobErr(err)
	}
	for _, id := range minions {
		if !out.Has(id) {
			out.Set(id, false)
		}
	}
	return out, nil
}

// orderMasters reports whether the master has syndics below it
// (order_masters: True), asked of the master as the salt command does.
func (s *Server) orderMasters(ctx context.Context) bool {
	info, err := s.pool.Syndics(ctx)
	return err == nil && info.OrderMasters
}

// minionReturn is one minion's entry of LocalClient.cmd's answer.
func minionReturn(data *ordered.Map, full bool) any {
	if !full {
		return data.Value("return")
	}
	r := ordered.FromPairs("ret", data.Value("return"))
	for _, k := range []string{"out", "retcode", "jid"} {
		if v, ok := data.Get(k); ok {
			r.Set(k, v)
		}
	}
	return r
}

// foundNoMore reports a find_job round the master refused for the
// caller (a user allowed only some functions may not run
// saltutil.find_job): the returns so far are the answer, as when no
// minion is still running the job.
func foundNoMore(err error) bool {
	var ae *master.AuthError
	return errors.As(err, &ae)
}

// localBatch is LocalClient.cmd_batch through salt/cli/batch.py, quiet:
// the minions that answer a ping run the job batch at a time, and each
// return is one item {id: return} (raw: the return event's data) in the
// order they come; a minion given up on is {id: {}}.
func (s *Server) localBatch(ctx context.Context, sess *client.Session, req master.PublishRequest, chunk *ordered.Map) (any, error) {
	spec := "10%"
	if v := chunk.Value("batch"); v != nil {
		spec = str(v)
	}
	wait, err := secondsOpt(chunk, "batch_wait", 0)
	if err != nil {
		return nil, err
	}
	up, _, err := sess.Ping(ctx, req)
	if err != nil {
		return nil, authErr(err)
	}
	var out many
	if len(up) == 0 {
		return out, nil
	}
	n, err := client.BatchSize(spec, len(up))
	if err != nil {
		return nil, httpError(400, "Invalid batch data sent: "+spec)
	}
	raw := truthy(chunk.Value("raw"))
	failhard, _ := s.masterOpts.Value("failhard").(bool)
	if chunk.Has("failhard") {
		failhard = truthy(chunk.Value("failhard"))
	}
	b := &client.Batch{S: sess, Req: req, N: n, Wait: wait, Failhard: failhard,
		OnReturn: func(id string, data *ordered.Map) {
			if raw {
				out = append(out, data)
				return
			}
			out = append(out, ordered.FromPairs(id, data.Value("return")))
		},
		OnTimeout: func(id string) { out = append(out, ordered.FromPairs(id, ordered.New())) },
	}
	if _, err := b.Run(ctx, up); err != nil && ctx.Err() == nil {
		return nil, s.jobErr(authErr(err))
	}
	return out, nil
}

// jobSession is a session for one local call: a job listener on the
// hub and the connection pool, with the call's timeouts.
func (s *Server) jobSession(chunk *ordered.Map) *jobSession {
	sub := s.hub.subscribe(4096, true)
	sess := &client.Session{Pub: trackingPub{p: s.pool, sub: sub}, Events: sub.evs,
		Timeout: s.timeout, GatherJobTimeout: s.gatherJobTimeout}
	if d, err := secondsOpt(chunk, "timeout", 0); err == nil && d > 0 {
		sess.Timeout = d
	}
	if d, err := secondsOpt(chunk, "gather_job_timeout", 0); err == nil && d > 0 {
		sess.GatherJobTimeout = d
	}
	return &jobSession{Session: sess, done: func() { s.hub.unsubscribe(sub) }}
}

// jobSession is a client.Session whose Close leaves the hub.
type jobSession struct {
	*client.Session
	done func()
}

// Close ends the listener.
func (j *jobSession) Close() { j.done() }

// jobErr is a job's collection failing: the master went away (503) or
// refused (401).
func (s *Server) jobErr(err error) error {
	if errors.Is(err, client.ErrMasterLost) && !foundNoMore(err) {
		return errMasterDown(err)
	}
	return authErr(err)
}

// secondsOpt reads a number of seconds (a number or a numeric string).
func secondsOpt(chunk *ordered.Map, key string, def time.Duration) (time.Duration, error) {
	v, ok := chunk.Get(key)
	if !ok || v == nil {
		return def, nil
	}
	f, ok := ordered.Number(v)
	if !ok {
		s, isStr := v.(string)
		var err error
		if f, err = strconv.ParseFloat(strings.TrimSpace(s), 64); !isStr || err != nil {
			return 0, httpError(400, fmt.Sprintf("%s: %v is not a number of seconds", key, v))
		}
	}
	return time.Duration(f * float64(time.Second)), nil
}

// intOpt reads a whole number (or a numeric string).
func intOpt(chunk *ordered.Map, key string, def int) (int, error) {
	v, ok := chunk.Get(key)
	if !ok || v == nil {
		return def, nil
	}
	switch x := v.(type) {
	case int:
		return x, nil
	case string:
		if n, err := strconv.Atoi(strings.TrimSpace(x)); err == nil {
			return n, nil
		}
	}
	return 0, httpError(400, fmt.Sprintf("%s: %v is not a whole number", key, v))
}

// warnUnused logs the lowstate keys a client does not read, once per
// key, so an option that does nothing is not silently dropped.
func (s *Server) warnUnused(client string, chunk *ordered.Map, known []string) {
	chunk.Range(func(k, _ any) bool {
		key := ordered.KeyString(k)
		for _, kn := range known {
			if kn == key {
				return true
			}
		}
		if _, dup := s.warned.LoadOrStore(client+"\x00"+key, true); !dup {
			s.log.Warn("lowstate key not used by this client", "client", client, slog.String("key", key))
		}
		return true
	})
}

func strList(l []string) []any {
	out := make([]any, len(l))
	for i, s := range l {
		out[i] = s
	}
	return out
}
