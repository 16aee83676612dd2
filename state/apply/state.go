// Package apply is the thin's entry to the state engine: Salt's `state`
// execution module (salt/modules/state.py), which renders, compiles and runs
// states through render, compile, pillar and run, registered as
// state.apply, sls, highstate, top, single, low, high, template,
// template_str, sls_id, test, the show_* functions, sls_exists and
// id_exists, the request family (request, check_request, clear_request,
// run_request), disable/enable/list_disabled, clear_cache and running,
// with Salt's return shapes and retcodes (0 success, 1 compile error, 2
// failed state, 5 pillar failure). pause, resume and soft_kill are left
// out: Salt's State honours them only with a job ID, which neither
// salt-call --local nor salt-ssh gives it.
package apply

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/compile"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/run"
	"github.com/brinesalt/brine/state/states"
)

// Salt's exit codes (salt/defaults/exitcodes.py).
const (
	exOK            = 0
	exCompilerError = 1
	exStateFailure  = 2
	exPillarFailure = 5
)

type module struct {
	states *states.Registry
	// plan, when set, makes state runs stop after compiling and record
	// what they would run (see Plan).
	plan *PlanResult
}

func init() { Register(modules.Default, states.Default) }

func opt(name string, def any) modules.Param {
	return modules.Param{Name: name, Optional: true, Default: def}
}

// Register adds the state functions to r, running states from st.
func Register(r *modules.Registry, st *states.Registry) { register(r, &module{states: st}) }

func register(r *modules.Registry, m *module) {
	kw := func(params ...modules.Param) modules.Spec { return modules.Spec{Params: params, VarKw: true} }
	for _, f := range []modules.Function{
		{Name: "state.apply", Spec: kw(opt("mods", nil)), Fn: m.apply},
		{Name: "state.test", Spec: modules.Spec{VarArgs: true, VarKw: true}, Fn: m.testFn},
		{Name: "state.sls", Spec: kw(modules.Param{Name: "mods"}, opt("test", nil), opt("exclude", nil), opt("queue", false), opt("sync_mods", nil)), Fn: m.sls},
		{Name: "state.highstate", Spec: kw(opt("test", nil), opt("queue", false), opt("state_events", nil)), Fn: m.highstate},
		{Name: "state.single", Spec: kw(modules.Param{Name: "fun"}, modules.Param{Name: "name"}, opt("test", nil), opt("queue", false)), Fn: m.single},
		{Name: "state.sls_id", Spec: kw(modules.Param{Name: "id_"}, modules.Param{Name: "mods"}, opt("test", nil), opt("queue", false), opt("state_events", nil)), Fn: m.slsID},
		{Name: "state.show_sls", Spec: kw(modules.Param{Name: "mods"}, opt("test", nil), opt("queue", false)), Fn: m.showSLS},
		{Name: "state.show_low_sls", Spec: kw(modules.Param{Name: "mods"}, opt("test", nil), opt("queue", false)), Fn: m.showLowSLS},
		{Name: "state.show_highstate", Spec: kw(opt("queue", false)), Fn: m.showHighstate},
		{Name: "state.show_lowstate", Spec: kw(opt("queue", false)), Fn: m.showLowstate},
		{Name: "state.show_top", Spec: kw(opt("queue", false)), Fn: m.showTop},
		{Name: "state.high", Spec: kw(modules.Param{Name: "data"}, opt("test", nil), opt("queue", false)), Fn: m.high},
		{Name: "state.template_str", Spec: kw(modules.Param{Name: "tem"}, opt("queue", false)), Fn: m.templateStr},
		{Name: "state.sls_exists", Spec: kw(modules.Param{Name: "mods"}, opt("test", nil), opt("queue", false)), Fn: m.slsExists},
		{Name: "state.id_exists", Spec: kw(modules.Param{Name: "ids"}, modules.Param{Name: "mods"}, opt("test", nil), opt("queue", false)), Fn: m.idExists},
		{Name: "state.low", Spec: kw(modules.Param{Name: "data"}, opt("queue", nil)), Fn: m.low},
		{Name: "state.template", Spec: kw(modules.Param{Name: "tem"}, opt("queue", nil)), Fn: m.template},
		{Name: "state.top", Spec: kw(modules.Param{Name: "topfn"}, opt("test", nil), opt("queue", nil)), Fn: m.top},
		{Name: "state.show_states", Spec: kw(opt("queue", nil)), Fn: m.showStates},
		{Name: "state.show_state_usage", Spec: kw(opt("queue", nil)), Fn: m.showStateUsage},
		{Name: "state.request", Spec: kw(opt("mods", nil)), Fn: m.request},
		{Name: "state.check_request", Spec: kw(opt("name", nil)), Fn: m.checkRequest},
		{Name: "state.clear_request", Spec: kw(opt("name", nil)), Fn: m.clearRequest},
		{Name: "state.run_request", Spec: kw(opt("name", "default")), Fn: m.runRequest},
		{Name: "state.disable", Spec: kw(modules.Param{Name: "states"}), Fn: m.disable},
		{Name: "state.enable", Spec: kw(modules.Param{Name: "states"}), Fn: m.enable},
		{Name: "state.list_disabled", Spec: kw(), Fn: m.listDisabled},
		{Name: "state.clear_cache", Spec: kw(), Fn: m.clearCache},
		{Name: "state.running", Spec: kw(opt("concurrent", false)), Fn: m.running},
	} {
		f.Doc = "Salt's " + f.Name
		f.Outputter = highstateOut[strings.TrimPrefix(f.Name, "state.")]
		r.Register(f)
	}
}

// Outputter is the outputter Salt's state module asks for the return of
// state function fun ("state.apply" → "highstate"); "" leaves the
// caller's.
func Outputter(fun string) string { return highstateOut[strings.TrimPrefix(fun, "state.")] }

// highstateOut lists the functions whose return the highstate
// outputter prints (salt/modules/state.py __outputter__); the others
// return data for the caller's outputter.
var highstateOut = map[string]string{
	"sls": "highstate", "sls_id": "highstate", "pkg": "highstate", "top": "highstate",
	"single": "highstate", "highstate": "highstate", "template": "highstate",
	"template_str": "highstate", "apply": "highstate", "test": "highstate",
	"request": "highstate", "check_request": "highstate", "run_request": "highstate",
}

func setRetcode(env *modules.Env, rc int) {
	if env.Context != nil {
		env.Context["retcode"] = rc
	}
}

func strList(l []string) []any {
	out := make([]any, len(l))
	for i, s := range l {
		out[i] = s
	}
	return out
}

// stateRetcode is _set_retcode: 2 unless check_result passes.
func stateRetcode(env *modules.Env, ret *ordered.Map) { stateRetcodeHigh(env, ret, nil) }

// stateRetcodeHigh is _set_retcode with the high data, so that a failure
// handled by an onfail state with onfail_stop: False does not count.
func stateRetcodeHigh(env *modules.Env, ret, high *ordered.Map) {
	if checkResult(ret, false, high) {
		setRetcode(env, exOK)
	} else {
		setRetcode(env, exStateFailure)
	}
}

// checkResult is salt/utils/state.py check_result: false for an empty
// mapping, a false result, or (at the top) a value that is not a mapping
// (a list for __extend__).
func checkResult(running *ordered.Map, recurse bool, high *ordered.Map) bool {
	if running.Len() == 0 {
		return false
	}
	ok := true
	running.Range(func(k, v any) bool {
		m, isMap := v.(*ordered.Map)
		if !recurse {
			if k == "__extend__" {
				_, isList := v.([]any)
				ok = isList
			} else {
				ok = isMap
			}
		}
		if ok && isMap {
			res, has := m.Get("result")
			if has && res == false {
				ok = false
			} else if !has {
				ok = checkResult(m, true, high)
			}
		}
		if !ok {
			ok = onfailHandled(ordered.KeyString(k), running, high)
		}
		return ok
	})
	return ok
}

// onfailHandled is check_onfail_requisites: a failed state counts as
// handled when an onfail state with onfail_stop: False targets it and
// none of those handlers failed.
func onfailHandled(tag string, running, high *ordered.Map) bool {
	if high == nil {
		return false
	}
	parts := strings.Split(tag, "_|-")
	id, mod := tag, ""
	if len(parts) == 4 {
		mod, id = parts[0], parts[1]
	}
	type handler struct{ id, mod string }
	var handlers []handler
	high.Range(func(fid, bv any) bool {
		b, ok := bv.(*ordered.Map)
		if !ok || ordered.KeyString(fid) == id {
			return true
		}
		b.Range(func(fmod, fv any) bool {
			l, ok := fv.([]any)
			name := ordered.KeyString(fmod)
			if !ok || strings.HasPrefix(name, "__") || !stopDisabled(l) {
				return true
			}
			for _, arg := range l {
				am, ok := arg.(*ordered.Map)
				if !ok {
					continue
				}
				reqs, _ := am.Value("onfail").([]any)
				for _, r := range reqs {
					rm, ok := r.(*ordered.Map)
					if !ok {
						continue
					}
					rm.Range(func(rk, rv any) bool {
						if ordered.KeyString(rv) == id && (mod == "" || ordered.KeyString(rk) == mod) {
							handlers = append(handlers, handler{ordered.KeyString(fid), name})
						}
						return true
					})
				}
			}
			return true
		})
		return true
	})
	if len(handlers) == 0 {
		return false
	}
	var nret any
	for _, h := range handlers {
		running.Range(func(k, v any) bool {
			p := strings.Split(ordered.KeyString(k), "_|-")
			if len(p) != 4 || p[0] != h.mod || p[1] != h.id {
				return true
			}
			if m, ok := v.(*ordered.Map); ok {
				if r, ok := m.Value("result").(bool); ok {
					nret = r
					if !r {
						return false
					}
				}
			}
			return true
		})
	}
	return nret == true
}

func stopDisabled(l []any) bool {
	for _, a := range l {
		if m, ok := a.(*ordered.Map); ok {
			if v, ok := m.Get("onfail_stop"); ok && v == false {
				return true
			}
		}
	}
	return false
}

func (m *module) apply(ctx context.Context, c *modules.Call) (any, error) {
	return m.applyWith(ctx, c.Env, c.Arg("mods"), c.Kwargs)
}

// applyWith is state.apply: state.sls with mods, else state.highstate.
func (m *module) applyWith(ctx context.Context, env *modules.Env, mods any, kw *ordered.Map) (any, error) {
	if modules.Truthy(mods) {
		kw = kw.Copy()
		return m.runSLS(ctx, env, mods, kw.Value("test"), kw.Value("exclude"), kw)
	}
	return m.runHighstate(ctx, env, kw.Value("test"), kw)
}

func (m *module) testFn(ctx context.Context, c *modules.Call) (any, error) {
	kw := c.Kwargs.Copy()
	kw.Set("test", true)
	if len(c.VarArgs) > 0 {
		return m.runSLS(ctx, c.Env, c.VarArgs[0], true, kw.Value("exclude"), kw)
	}
	return m.runHighstate(ctx, c.Env, true, kw)
}

func (m *module) sls(ctx context.Context, c *modules.Call) (any, error) {
	return m.runSLS(ctx, c.Env, c.Arg("mods"), c.Arg("test"), c.Arg("exclude"), c.Kwargs)
}

func (m *module) highstate(ctx context.Context, c *modules.Call) (any, error) {
	return m.runHighstate(ctx, c.Env, c.Arg("test"), c.Kwargs)
}

func pillarFailure(env *modules.Env, errs []any) any {
	setRetcode(env, exPillarFailure)
	return append([]any{"Pillar failed to render with the following messages:"}, errs...)
}

func (m *module) runSLS(ctx context.Context, env *modules.Env, mods, test, exclude any, kw *ordered.Map) (any, error) {
	if msgs := disabledMods(env, mods); len(msgs) > 0 {
		setRetcode(env, exCompilerError)
		return msgs, nil
	}
	j, err := m.newJob(ctx, env, kw, test)
	if err != nil {
		return nil, err
	}
	if j.saltenv == "" {
		j.saltenv = "base"
	}
	if errs := j.pillarErrors(kw); len(errs) > 0 {
		return pillarFailure(env, errs), nil
	}
	if i, ok := mods.(int); ok {
		mods = fmt.Sprint(i)
	}
	hs := j.highstate()
	high, errs := hs.RenderHighstate(ctx, compile.Single(j.saltenv, splitStrings(mods)))
	if len(errs) > 0 {
		setRetcode(env, exCompilerError)
		return strList(errs), nil
	}
	if ex := splitInput(exclude); len(ex) > 0 {
		l, _ := high.Value("__exclude__").([]any)
		high.Set("__exclude__", append(l, ex...))
	}
	return j.callHigh(ctx, high)
}

// callHigh runs high data and sets the retcode.
func (j *job) callHigh(ctx context.Context, high *ordered.Map) (any, error) {
	if j.plan != nil {
		j.plan.High, j.plan.Pillar, j.plan.Test = high, j.pillar, j.test
		return nil, errPlanned
	}
	res, err := j.runner().CallHigh(ctx, high)
	var ce *run.CompileError
	if errors.As(err, &ce) {
		setRetcode(j.env, exCompilerError)
		return strList(ce.Messages()), nil
	}
	if err != nil {
		return nil, err
	}
	out := res.Map()
	if j.terse {
		out = filterRunning(out)
	}
	stateRetcodeHigh(j.env, out, high)
	return out, nil
}

// filterRunning drops successful states without changes (terse=True,
// _filter_running).
func filterRunning(ret *ordered.Map) *ordered.Map {
	out := ordered.New()
	ret.Range(func(k, v any) bool {
		m, _ := v.(*ordered.Map)
		if m == nil || m.Value("result") != true || changedMap(m.Value("changes")) {
			out.Set(k, v)
		}
		return true
	})
	return out
}

func changedMap(v any) bool {
	m, ok := v.(*ordered.Map)
	return !ok && modules.Truthy(v) || ok && m.Len() > 0
}

func noStates(comment string) *ordered.Map {
	return ordered.FromPairs("no_|-states_|-states_|-None", ordered.FromPairs(
		"result", false, "comment", comment, "name", "No States", "changes", ordered.New(), "__run_num__", 0))
}

func (m *module) runHighstate(ctx context.Context, env *modules.Env, test any, kw *ordered.Map) (any, error) {
	if disabled(env, []string{"highstate"}) != nil {
		// Salt returns this dict, with the string "False", and leaves
		// the retcode alone (salt/modules/state.py highstate).
		msg := "Salt highstate run is disabled. To re-enable, run state.enable highstate"
		return ordered.FromPairs("name", msg, "result", "False", "comment", "Disabled"), nil
	}
	j, err := m.newJob(ctx, env, kw, test)
	if err != nil {
		return nil, err
	}
	return j.runHighstate(ctx, kw)
}

// runHighstate is call_highstate on the job's top file.
func (j *job) runHighstate(ctx context.Context, kw *ordered.Map) (any, error) {
	env := j.env
	if errs := j.pillarErrors(kw); len(errs) > 0 {
		return pillarFailure(env, errs), nil
	}
	hs := j.highstate()
	top, err := hs.GetTop(ctx)
	if err != nil {
		out := noStates("Unable to render top file: " + err.Error())
		stateRetcode(env, out)
		return out, nil
	}
	errs := compile.VerifyTops(top)
	matches, err := hs.TopMatches(top)
	if err != nil {
		return nil, err
	}
	if len(matches.Envs) == 0 {
		out := noStates("No Top file or master_tops data matches found. Please see master log for details.")
		stateRetcode(env, out)
		return out, nil
	}
	if wl := splitStrings(kw.Value("whitelist")); len(wl) > 0 {
		matches = whitelist(matches, wl)
	}
	high, rerrs := hs.RenderHighstate(ctx, matches)
	errs = append(errs, rerrs...)
	if ex := splitInput(kw.Value("exclude")); len(ex) > 0 {
		l, _ := high.Value("__exclude__").([]any)
		high.Set("__exclude__", append(l, ex...))
	}
	if len(errs) > 0 {
		setRetcode(env, exCompilerError)
		return strList(errs), nil
	}
	if high.Len() == 0 {
		out := noStates("No states found for this minion")
		stateRetcode(env, out)
		return out, nil
	}
	return j.callHigh(ctx, high)
}

func whitelist(m *compile.Matches, wl []string) *compile.Matches {
	allowed := map[string]bool{}
	for _, w := range wl {
		allowed[w] = true
	}
	out := &compile.Matches{SLS: map[string][]string{}}
	for _, e := range m.Envs {
		for _, s := range m.SLS[e] {
			if allowed[s] {
				if _, ok := out.SLS[e]; !ok {
					out.Envs = append(out.Envs, e)
				}
				out.SLS[e] = append(out.SLS[e], s)
			}
		}
	}
	return out
}

func (m *module) single(ctx context.Context, c *modules.Call) (any, error) {
	fun := c.Str("fun")
	mod, f, ok := strings.Cut(fun, ".")
	if !ok {
		setRetcode(c.Env, exCompilerError)
		return "Invalid function passed", nil
	}
	low := c.Kwargs.Copy()
	low.Set("state", mod)
	low.Set("fun", f)
	low.Set("__id__", c.Arg("name"))
	low.Set("name", c.Arg("name"))
	j, err := m.newJob(ctx, c.Env, c.Kwargs, c.Arg("test"))
	if err != nil {
		return nil, err
	}
	r, bad := j.verifiedRunner(low)
	if r == nil {
		return bad, nil
	}
	res, err := r.Call(ctx, low)
	if err != nil {
		return nil, err
	}
	out := res.Map()
	stateRetcode(c.Env, out)
	return out, nil
}

func (m *module) slsID(ctx context.Context, c *modules.Call) (any, error) {
	j, err := m.newJob(ctx, c.Env, c.Kwargs, c.Arg("test"))
	if err != nil {
		return nil, err
	}
	if j.saltenv == "" {
		j.saltenv = "base"
	}
	if errs := j.pillarErrors(c.Kwargs); len(errs) > 0 {
		return pillarFailure(c.Env, errs), nil
	}
	high, errs := j.highstate().RenderHighstate(ctx, compile.Single(j.saltenv, splitStrings(c.Arg("mods"))))
	errs = append(errs, compile.VerifyHigh(high)...)
	errs = append(errs, compile.RequisiteIn(high)...)
	if len(errs) > 0 {
		setRetcode(c.Env, exCompilerError)
		return strList(errs), nil
	}
	chunks := compile.CompileHigh(high)
	r := j.runner()
	out := run.NewResults()
	id := ordered.KeyString(c.Arg("id_"))
	for _, ch := range chunks {
		if ordered.KeyString(ch.Value("__id__")) != id {
			continue
		}
		res, err := r.RunChunk(ctx, ch, chunks)
		if err != nil {
			return nil, err
		}
		for _, t := range res.Tags() {
			v, _ := res.Get(t)
			out.Set(t, v)
		}
	}
	if out.Len() == 0 {
		return nil, modules.Invalidf("No matches for ID '%s' found in SLS '%s' within saltenv '%s'", id, ordered.KeyString(c.Arg("mods")), j.saltenv)
	}
	ret := out.Map()
	stateRetcode(c.Env, ret)
	return ret, nil
}
