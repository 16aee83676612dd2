package orchestrate

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/apply"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/states"
)

// registerSalt adds the `salt` state module (salt/states/saltmod.py)
// bound to the run to st.
func registerSalt(st *states.Registry, r *run) {
	p := func(name string) modules.Param { return modules.Param{Name: name} }
	st.Register(states.Function{Name: "salt.state", Spec: modules.Spec{Params: []modules.Param{
		p("name"), p("tgt"), opt("ssh", false), opt("tgt_type", "glob"), opt("ret", ""), opt("ret_config", nil),
		opt("ret_kwargs", nil), opt("highstate", nil), opt("sls", nil), opt("top", nil), opt("saltenv", nil),
		opt("test", nil), opt("pillar", nil), opt("pillarenv", nil), opt("expect_minions", true),
		opt("exclude", nil), opt("fail_minions", nil), opt("allow_fail", 0), opt("concurrent", false),
		opt("timeout", nil), opt("batch", nil), opt("queue", false), opt("subset", nil),
		opt("orchestration_jid", nil), opt("failhard", nil)}, VarKw: true}, Fn: r.saltState})
	st.Register(states.Function{Name: "salt.function", Spec: modules.Spec{Params: []modules.Param{
		p("name"), p("tgt"), opt("ssh", false), opt("tgt_type", "glob"), opt("ret", ""), opt("ret_config", nil),
		opt("ret_kwargs", nil), opt("expect_minions", false), opt("fail_minions", nil), opt("fail_function", nil),
		opt("arg", nil), opt("kwarg", nil), opt("timeout", nil), opt("batch", nil), opt("subset", nil),
		opt("failhard", nil)}, VarKw: true}, Fn: r.saltFunction})
	st.Register(states.Function{Name: "salt.runner", Spec: modules.Spec{Params: []modules.Param{p("name")}, VarKw: true},
		Fn: r.saltRunner})
	st.Register(states.Function{Name: "salt.wheel", Spec: modules.Spec{Params: []modules.Param{p("name")}, VarKw: true},
		Fn: r.saltWheel})
	st.Register(states.Function{Name: "salt.wait_for_event", Spec: modules.Spec{Params: []modules.Param{
		p("name"), p("id_list"), opt("event_id", "id"), opt("timeout", 300), opt("node", "master")}},
		Fn: r.waitForEvent})
}

// cmdOptions reads the options salt.state and salt.function share into
// a saltutil.cmd request.
func (r *run) cmdOptions(c *states.Call, fun string) (*cmdRequest, error) {
	req := &cmdRequest{tgt: c.Arg("tgt"), tgtType: c.Str("tgt_type"), fun: fun, ret: c.Str("ret"),
		ssh: c.Bool("ssh"), kwarg: ordered.New()}
	if req.tgtType == "" {
		req.tgtType = "glob"
	}
	if rc := c.Arg("ret_config"); modules.Truthy(rc) {
		req.retConfig = ordered.KeyString(rc)
	}
	if rk, ok := c.Arg("ret_kwargs").(*ordered.Map); ok {
		req.retKwargs = rk
	}
	if v, ok := c.Kw("roster"); ok {
		req.roster = ordered.KeyString(v)
	}
	if t := c.Arg("timeout"); t != nil {
		f, err := number(t)
		if err != nil {
			return nil, fmt.Errorf("timeout: %w", err)
		}
		req.timeout = time.Duration(f * float64(time.Second))
	}
	if b := c.Arg("batch"); b != nil {
		req.batch = ordered.KeyString(b)
	}
	if s := c.Arg("subset"); s != nil {
		n, err := number(s)
		if err != nil {
			return nil, fmt.Errorf("subset: %w", err)
		}
		req.subset = int(n)
	}
	req.failhard = c.Arg("failhard") == true || modules.Truthy(c.Env.Opts.Value("failhard"))
	return req, nil
}

func number(v any) (float64, error) {
	switch x := v.(type) {
	case int:
		return float64(x), nil
	case float64:
		return x, nil
	case string:
		return strconv.ParseFloat(strings.TrimSpace(x), 64)
	}
	return 0, fmt.Errorf("not a number: %s", ordered.KeyString(v))
}

// failMinions reads fail_minions: a list or a comma-separated string;
// anything else is ignored with Salt's warning.
func failMinions(res *states.Result, v any) map[string]bool {
	out := map[string]bool{}
	switch x := v.(type) {
	case nil:
	case string:
		for _, s := range strings.Split(x, ",") {
			out[strings.TrimSpace(s)] = true
		}
	case []any:
		for _, s := range x {
			out[ordered.KeyString(s)] = true
		}
	default:
		res.Warnings = append(res.Warnings, "'fail_minions' needs to be a list or a comma separated string. Ignored.")
	}
	return out
}

// stateTest is the test flag the orchestration runs with (Salt's
// __opts__["test"]).
func stateTest(c *states.Call) bool { return c.Env.Test }

// saltState is salt.state: run state.sls, state.highstate or state.top
// on the targeted minions (or roster hosts, ssh: True) and judge each
// minion's return with check_result.
func (r *run) saltState(ctx context.Context, c *states.Call) (*states.Result, error) {
	res := states.NewResult(c.Arg("name"), states.True, "")
	allowFail, err := strconv.Atoi(strings.TrimSpace(ordered.KeyString(c.Arg("allow_fail"))))
	if err != nil {
		res.Result, res.Comment = states.False, "Passed invalid value for 'allow_fail', must be an int"
		return res, nil
	}
	var fun string
	var arg []any
	switch {
	case modules.Truthy(c.Arg("highstate")):
		fun = "state.highstate"
	case modules.Truthy(c.Arg("top")):
		fun, arg = "state.top", []any{c.Arg("top")}
	case modules.Truthy(c.Arg("sls")):
		sls := c.Arg("sls")
		if l, ok := sls.([]any); ok {
			parts := make([]string, len(l))
			for i, s := range l {
				parts[i] = ordered.KeyString(s)
			}
			sls = strings.Join(parts, ",")
		}
		fun, arg = "state.sls", []any{sls}
	default:
		res.Result, res.Comment = states.False, "No highstate or sls specified, no execution made"
		return res, nil
	}
	req, err := r.cmdOptions(c, fun)
	if err != nil {
		res.Result, res.Comment = states.False, err.Error()
		return res, nil
	}
	req.arg = arg
	req.expectMinions = modules.Truthy(c.Arg("expect_minions"))
	test := c.Arg("test")
	if test != nil || stateTest(c) {
		if test == nil {
			test = true
		}
		req.kwarg.Set("test", test)
	}
	if p := c.Arg("pillar"); modules.Truthy(p) {
		req.kwarg.Set("pillar", p)
	}
	for _, k := range []string{"pillarenv", "saltenv", "exclude"} {
		if v := c.Arg(k); v != nil {
			req.kwarg.Set(k, v)
		}
	}
	req.kwarg.Set("queue", c.Arg("queue"))
	conc, ok := c.Arg("concurrent").(bool)
	if !ok {
		res.Result, res.Comment = states.False, "Must pass in boolean for value of 'concurrent'"
		return res, nil
	}
	req.kwarg.Set("concurrent", conc)
	r.fireArgs(ordered.FromPairs("type", "state", "tgt", c.Arg("tgt"), "name", c.Arg("name"), "args", req.eventArgs()))
	cmdRet, err := r.cmd(ctx, req)
	if err != nil {
		res.Result, res.Comment = states.False, err.Error()
		return res, nil
	}
	return judgeState(res, c, cmdRet, req.expectMinions, allowFail), nil
}

// judgeState is the second half of saltmod.state: a minion fails when
// it did not return, or check_result(recurse=True) fails on its return.
func judgeState(res *states.Result, c *states.Call, cmdRet *ordered.Map, expect bool, allowFail int) *states.Result {
	setJID(res, cmdRet)
	failOK := failMinions(res, c.Arg("fail_minions"))
	if cmdRet.Len() == 0 && expect {
		res.Result, res.Comment = states.False, "No minions returned"
		return res
	}
	changes := ordered.New()
	var fail, noChange []string
	cmdRet.Range(func(k, v any) bool {
		id := ordered.KeyString(k)
		md, _ := v.(*ordered.Map)
		var mRet any = false
		ok := md != nil && md.Value("failed") != true && md.Has("ret")
		if ok {
			mRet = md.Value("ret")
			ok = apply.CheckResult(mRet, true)
		}
		if !ok {
			if !failOK[id] {
				fail = append(fail, id)
			}
			changes.Set(id, mRet)
			return true
		}
		if hasChanges(mRet) {
			changes.Set(id, mRet)
		} else {
			noChange = append(noChange, id)
		}
		return true
	})
	if changes.Len() > 0 {
		res.Changes = ordered.FromPairs("out", "highstate", "ret", changes)
	}
	if len(fail) > allowFail {
		res.Result, res.Comment = states.False, "Run failed on minions: "+strings.Join(fail, ", ")
	} else {
		res.Comment = "States ran successfully."
		if changes.Len() > 0 {
			res.Comment += " Updating " + strings.Join(keys(changes), ", ") + "."
		}
		if len(noChange) > 0 {
			res.Comment += " No changes made to " + strings.Join(noChange, ", ") + "."
		}
	}
	if (c.Arg("test") == true || stateTest(c)) && changes.Len() > 0 && res.Result == states.True {
		// Test mode with changes is the only case where result is None.
		res.Result = states.None
	}
	return res
}

// hasChanges reports whether any state in a minion's return changed
// something.
func hasChanges(ret any) bool {
	m, ok := ret.(*ordered.Map)
	if !ok {
		return false
	}
	found := false
	m.Range(func(_, v any) bool {
		if s, ok := v.(*ordered.Map); ok && modules.Truthy(s.Value("changes")) {
			found = true
		}
		return !found
	})
	return found
}

func keys(m *ordered.Map) []string {
	var out []string
	m.Range(func(k, _ any) bool { out = append(out, ordered.KeyString(k)); return true })
	return out
}

// setJID records the job's jid as the state's __jid__, as saltmod does
// from the first minion's return.
func setJID(res *states.Result, cmdRet *ordered.Map) {
	var jid any
	cmdRet.Range(func(_, v any) bool {
		if md, ok := v.(*ordered.Map); ok {
			jid = md.Value("jid")
		}
		return false
	})
	if jid != nil {
		res.Extra = ordered.FromPairs("__jid__", jid)
	}
}
