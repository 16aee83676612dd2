package orchestrate

import (
	"context"
	"fmt"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/states"
)

// saltFunction is salt.function: run execution function name on the
// targets; a minion fails with a non-zero retcode, a False return, no
// return (expect_minions), or a false fail_function verdict.
func (r *run) saltFunction(ctx context.Context, c *states.Call) (*states.Result, error) {
	name := c.Str("name")
	res := states.NewResult(c.Arg("name"), states.True, "")
	req, err := r.cmdOptions(c, name)
	if err != nil {
		res.Result, res.Comment = states.False, err.Error()
		return res, nil
	}
	switch a := c.Arg("arg").(type) {
	case nil:
	case string:
		res.Warnings = append(res.Warnings, "Please specify 'arg' as a list of arguments.")
		for _, f := range strings.Fields(a) {
			req.arg = append(req.arg, f)
		}
	case []any:
		req.arg = a
	default:
		req.arg = []any{a}
	}
	if kw, ok := c.Arg("kwarg").(*ordered.Map); ok {
		req.kwarg = kw
	}
	req.expectMinions = modules.Truthy(c.Arg("expect_minions"))
	if stateTest(c) {
		res.Result = states.None
		res.Comment = fmt.Sprintf("Function %s would be executed on target %s", name, ordered.KeyString(c.Arg("tgt")))
		return res, nil
	}
	r.fireArgs(ordered.FromPairs("type", "function", "tgt", c.Arg("tgt"), "name", c.Arg("name"), "args", req.eventArgs()))
	cmdRet, err := r.cmd(ctx, req)
	if err != nil {
		res.Result, res.Comment = states.False, err.Error()
		return res, nil
	}
	setJID(res, cmdRet)
	failOK := failMinions(res, c.Arg("fail_minions"))
	failFn := c.Str("fail_function")
	changes := ordered.New()
	var fail []string
	addFail := func(id string) {
		for _, f := range fail {
			if f == id {
				return
			}
		}
		fail = append(fail, id)
	}
	cmdRet.Range(func(k, v any) bool {
		id := ordered.KeyString(k)
		md, _ := v.(*ordered.Map)
		var mRet any = false
		if rc, _ := protocol.AsInt(md.Value("retcode")); rc != 0 {
			res.Result = states.False
			addFail(id)
		}
		ok := false
		if md.Value("failed") != true {
			mRet = md.Value("ret")
			ok = true
			if failFn != "" {
				v, err := c.Env.Run(ctx, failFn, []any{mRet}, nil)
				ok = err == nil && modules.Truthy(v)
			}
			if mRet == false {
				ok = false
			}
		}
		if !ok && !failOK[id] {
			addFail(id)
		}
		changes.Set(id, mRet)
		return true
	})
	if cmdRet.Len() == 0 {
		res.Result, res.Comment = states.False, "No minions responded"
		return res, nil
	}
	res.Changes = ordered.FromPairs("ret", changes)
	if len(fail) > 0 {
		res.Result = states.False
		res.Comment = fmt.Sprintf("Running function %s failed on minions: %s", name, strings.Join(fail, ", "))
	} else {
		res.Comment = "Function ran successfully."
	}
	res.Comment += fmt.Sprintf(" Function %s ran on %s.", name, strings.Join(keys(changes), ", "))
	return res, nil
}

// saltRunner is salt.runner: the runner function as a job of its own
// (saltutil.runner), its return under changes.return.
func (r *run) saltRunner(ctx context.Context, c *states.Call) (*states.Result, error) {
	name := c.Str("name")
	if stateTest(c) {
		return states.NewResult(c.Arg("name"), states.None, fmt.Sprintf("Runner function '%s' would be executed.", name)), nil
	}
	args, kw := runnerArgs(c.Kwargs)
	if name == "state.orchestrate" || name == "state.orch" || name == "state.sls" {
		kw.Set("orchestration_jid", r.jid)
	}
	if r.jid != "" {
		r.fireArgs(ordered.FromPairs("type", "runner", "name", name, "args", orList(args), "kwargs", kw))
	}
	out := r.m.RunnerJob(ctx, name, args, kw, r.user)
	return jobResult(c, "Runner", name, out), nil
}

// saltWheel is salt.wheel: the wheel function as a job of its own
// (saltutil.wheel), its return under changes.return.
func (r *run) saltWheel(ctx context.Context, c *states.Call) (*states.Result, error) {
	name := c.Str("name")
	if stateTest(c) {
		return states.NewResult(c.Arg("name"), states.None, fmt.Sprintf("Wheel function '%s' would be executed.", name)), nil
	}
	_, kw := runnerArgs(c.Kwargs)
	out := r.m.WheelJob(ctx, name, kw, r.user)
	return jobResult(c, "Wheel", name, out), nil
}

// runnerArgs is saltutil.runner's split of the state's kwargs: arg and
// kwarg as given, every other keyword merged into kwarg.
func runnerArgs(kw *ordered.Map) ([]any, *ordered.Map) {
	var args []any
	out := ordered.New()
	kw.Range(func(k, v any) bool {
		switch key := ordered.KeyString(k); key {
		case "arg":
			if l, ok := v.([]any); ok {
				args = l
			} else if v != nil {
				args = []any{v}
			}
		case "kwarg":
			if m, ok := v.(*ordered.Map); ok {
				m.Range(func(k2, v2 any) bool { out.Set(k2, v2); return true })
			}
		default:
			out.Set(key, v)
		}
		return true
	})
	return args, out
}

// jobResult is the state return of salt.runner and salt.wheel: the
// job's success (false also when the return is a mapping with "Error"),
// its return as changes.return and its jid as __jid__.
func jobResult(c *states.Call, kind, name string, out *ordered.Map) *states.Result {
	ret := out.Value("return")
	success := out.Value("success") != false
	if m, ok := ret.(*ordered.Map); ok && m.Has("Error") {
		success = false
	}
	verb := "executed"
	if !success {
		verb = "failed"
	}
	res := states.NewResult(c.Arg("name"), states.TriOf(success), fmt.Sprintf("%s function '%s' %s.", kind, name, verb))
	res.Changes = ordered.FromPairs("return", ret)
	if jid := out.Value("jid"); jid != nil {
		res.Extra = ordered.FromPairs("__jid__", jid)
	}
	return res
}

func orList(l []any) []any {
	if l == nil {
		return []any{}
	}
	return l
}
