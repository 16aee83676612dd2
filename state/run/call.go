package run

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/state/compile"
	"github.com/brinesalt/brine/state/keyword"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/states"
)

// stateCall is one call of a state function: what call hands to invoke
// and to a parallel run, and what their retries call again with.
type stateCall struct {
	f      *states.Function
	env    *modules.Env
	low    Chunk
	args   map[string]any
	kwargs *ordered.Map
	reqs   map[string][]Chunk
	// running is the running dict the state function sees: the live one,
	// or for a parallel state a copy taken when it started.
	running *Results
}

// VerifyData checks a low chunk before it runs (salt/state.py
// verify_data), converting watch into require for modules without
// mod_watch.
func (r *Runner) VerifyData(low Chunk) []string {
	var errs []string
	for _, k := range []string{"state", "fun", "name"} {
		if !low.Has(k) {
			errs = append(errs, fmt.Sprintf("Missing \"%s\" data", k))
		}
	}
	if len(errs) > 0 {
		return errs
	}
	if name := low.Value("name"); modules.Truthy(name) {
		if _, ok := name.(string); !ok {
			in := ""
			if sls, ok := low.Get("__sls__"); ok {
				in = fmt.Sprintf("in SLS '%s' ", str(sls))
			}
			errs = append(errs, fmt.Sprintf("ID '%s' %sis not formed as a string, but is a %s", str(name), in, py.TypeName(name)))
		}
	}
	if v, ok := low.Get("umask"); ok {
		low.Delete("umask")
		if m, ok := parseUmask(v); ok {
			low.Set("__umask__", m)
		} else {
			errs = append(errs, fmt.Sprintf("Invalid umask: %s", str(v)))
		}
	}
	if len(errs) > 0 {
		return errs
	}
	errs = r.verifyFunction(low)
	return append(errs, r.verifyRecursion(low)...)
}

// verifyFunction reports a missing state function or missing parameters.
func (r *Runner) verifyFunction(low Chunk) []string {
	full := str(low.Value("state")) + "." + str(low.Value("fun"))
	f, reason := r.States.Lookup(r.Env, full)
	if f == nil {
		sls, ok := low.Get("__sls__")
		if !ok {
			return []string{fmt.Sprintf("Specified state '%s' was not found", full)}
		}
		errs := []string{fmt.Sprintf("State '%s' was not found in SLS '%s'", full, str(sls))}
		if reason != "" {
			errs = append(errs, "Reason: "+reason)
		}
		return errs
	}
	var errs []string
	for _, p := range f.Required() {
		if !low.Has(p) {
			errs = append(errs, fmt.Sprintf("Missing parameter %s for state %s", p, full))
		}
	}
	return errs
}

// verifyRecursion reports a state that requires (or watches) itself.
func (r *Runner) verifyRecursion(low Chunk) []string {
	reqdec := ""
	if low.Has("require") {
		reqdec = "require"
	}
	if low.Has("watch") {
		if !r.hasModWatch(low) {
			low.Set("require", append(append([]any(nil), reqList(low, "require")...), reqList(low, "watch")...))
			low.Delete("watch")
			reqdec = "require"
		} else {
			reqdec = "watch"
		}
	}
	var errs []string
	for _, req := range reqList(low, reqdec) {
		m, ok := req.(*ordered.Map)
		if !ok {
			continue
		}
		k, v, _ := compile.First(m)
		vs, ok := v.(string)
		if !ok || k != str(low.Value("state")) {
			continue
		}
		if compile.Fnmatch(str(low.Value("name")), vs) || compile.Fnmatch(str(low.Value("__id__")), vs) {
			errs = append(errs, fmt.Sprintf("Recursive require detected in SLS %s for require {'%s': '%s'} in ID %s",
				str(low.Value("__sls__")), k, vs, str(low.Value("__id__"))))
		}
	}
	return errs
}

// call runs the state function of low (salt/state.py State.call). Its
// error is a *FatalError, which aborts the whole job.
func (r *Runner) call(ctx context.Context, low Chunk, reqs map[string][]Chunk, retries int) (*ordered.Map, error) {
	start := r.now()
	if errs := r.VerifyData(low); len(errs) > 0 {
		return r.verifyFailed(low, errs), nil
	}
	full := str(low.Value("state")) + "." + str(low.Value("fun"))
	f, _ := r.States.Lookup(r.Env, full)
	args, kwargs, err := f.Bind(low, keyword.Internal)
	if err != nil {
		return nil, &FatalError{Err: err}
	}
	isPre := truthy(low, "__prereq__")
	env := *r.Env
	if isPre {
		env.Test = true
	}
	c := &stateCall{f: f, env: &env, low: low, args: args, kwargs: kwargs, reqs: reqs, running: r.running}
	ret := r.runState(ctx, c, isPre)
	if isPre {
		low.Set("__prereq__", false)
		return ret, nil
	}
	ret.Set("__sls__", low.Value("__sls__"))
	ret.Set("__run_num__", r.nextRunNum())
	r.logResult(ret)
	r.checkRefresh(ctx, low)
	end := r.now()
	ret.Set("start_time", startTime(start))
	ret.Set("duration", durationMS(end.Sub(start)))
	ret.Set("__id__", low.Value("__id__"))
	// Salt retries here only without a `parallel` key, even parallel:
	// False (State.call); a parallel state retries in its own run.
	if low.Has("retry") && !low.Has("parallel") {
		return r.retry(ctx, low, reqs, retries, ret, &env)
	}
	return ret, nil
}

// verifyFailed is the return of a chunk VerifyData refused, its errors
// logged and joined into the comment.
func (r *Runner) verifyFailed(low Chunk, errs []string) *ordered.Map {
	var cm strings.Builder
	for _, e := range errs {
		cm.WriteString(e + "\n")
	}
	r.log().Error(strings.TrimRight(cm.String(), "\n"))
	return ordered.FromPairs("result", false, "name", low.Value("name"), "changes", ordered.New(),
		"comment", cm.String(), "__run_num__", r.nextRunNum())
}

// runState runs the state function unless onlyif, unless or creates say
// not to: mocked, started in parallel, or called under the chunk's
// umask; then check_cmd, where the state system runs it.
func (r *Runner) runState(ctx context.Context, c *stateCall, isPre bool) *ordered.Map {
	var ret *ordered.Map
	if r.needsRunCheck(c.low) {
		ret = r.runCheck(ctx, c.env, c.low)
	}
	if ret == nil || ret.Value("result") == false {
		if r.Mock {
			ret = ordered.FromPairs("name", c.low.Value("name"), "comment", "Not called, mocked",
				"changes", ordered.New(), "result", true)
		} else if !isPre && truthy(c.low, "parallel") {
			// A prereq's test run is never parallel (State.call).
			ret = r.startParallel(ctx, c)
		} else {
			ret = r.invokeUmask(ctx, c)
		}
	}
	if c.low.Has("check_cmd") && r.globalCheckCmd(c.low, c.f) {
		r.runCheckCmd(ctx, c.low, ret)
	}
	return ret
}

// globalCheckCmd reports whether the state system runs check_cmd itself:
// unless the module has mod_run_check_cmd and the function takes a
// check_cmd parameter.
func (r *Runner) globalCheckCmd(low Chunk, f *states.Function) bool {
	if !r.States.Has(r.Env, str(low.Value("state"))+".mod_run_check_cmd") {
		return true
	}
	for _, p := range f.Spec.Params {
		if p.Name == "check_cmd" {
			return false
		}
	}
	return true
}

// invoke calls the state function, turning a Go error into Salt's
// "An exception occurred in this state" return.
func (r *Runner) invoke(ctx context.Context, c *stateCall) *ordered.Map {
	saltenv := "base"
	if v, ok := c.low.Get("__env__"); ok {
		saltenv = str(v)
	}
	if v, ok := c.low.Get("saltenv"); ok {
		saltenv = str(v)
	}
	sc := &states.Call{Env: c.env, Args: c.args, Kwargs: c.kwargs, Low: c.low, Reqs: c.reqs,
		Running: c.running.Get, Saltenv: saltenv, Template: r.Template}
	err := r.formatSlots(ctx, c.env, c.args, c.kwargs)
	var res *states.Result
	if err == nil {
		res, err = safeRun(ctx, c.f, sc)
	}
	if err != nil {
		name := c.args["name"]
		if !modules.Truthy(name) {
			name = c.low.Value("name")
		}
		return ordered.FromPairs("result", false, "name", name, "changes", ordered.New(),
			"comment", "An exception occurred in this state: "+traceback(err))
	}
	return resultMap(res)
}

// safeRun calls a state function, turning a panic into an error as
// Python turns a crash into an exception.
func safeRun(ctx context.Context, f *states.Function, c *states.Call) (res *states.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, fmt.Errorf("panic: %v", p)
		}
	}()
	res, err = f.Run(ctx, c)
	if err == nil && res == nil {
		err = errors.New("state function returned no result")
	}
	return res, err
}

// traceback renders a Go error in the shape of the Python traceback Salt
// puts in the comment.
func traceback(err error) string {
	kind := "Exception"
	var inv *modules.InvocationError
	var ex *modules.ExecutionError
	switch {
	case errors.As(err, &inv):
		kind = "salt.exceptions.SaltInvocationError"
	case errors.As(err, &ex):
		kind = "salt.exceptions.CommandExecutionError"
	}
	return "Traceback (most recent call last):\n  File \"<brine>\", in call\n" + kind + ": " + err.Error() + "\n"
}

// resultMap converts a state Result into Salt's return dict.
func resultMap(res *states.Result) *ordered.Map {
	ch := res.Changes
	if ch == nil {
		ch = ordered.New()
	}
	m := ordered.FromPairs("name", res.Name, "changes", ch, "result", res.Result.Value(), "comment", res.Comment)
	if len(res.Warnings) > 0 {
		m.Set("warnings", res.Warnings)
	}
	res.Extra.Range(func(k, v any) bool { m.Set(k, v); return true })
	return m
}

// logResult logs failures as salt/state.py format_log does.
func (r *Runner) logResult(ret *ordered.Map) {
	if ret.Value("result") != false {
		return
	}
	if c, _ := ret.Value("comment").(string); c != "" {
		r.log().Error(c)
	}
}

// checkRefresh is check_refresh's reload_grains and reload_pillar: after
// the state ran, whatever its result, the next states see fresh grains
// or pillar. (Its module reloads have nothing to do in Brine, whose
// modules are compiled in.)
func (r *Runner) checkRefresh(ctx context.Context, low Chunk) {
	g, p := truthy(low, "reload_grains"), truthy(low, "reload_pillar")
	if (g || p) && r.Refresh != nil && r.Env != nil {
		r.Refresh(ctx, r.Env, g, p)
	}
}

// parseUmask is verify_data's int(str(umask), 8): an octal number, with
// an optional 0o prefix. YAML's `umask: 0022` arrives as the integer 22
// (Salt's loader reads a leading zero as decimal) and so means 0o22.
func parseUmask(v any) (int, bool) {
	s := strings.ReplaceAll(strings.TrimSpace(str(v)), "_", "")
	s = strings.TrimPrefix(s, "+")
	if len(s) > 2 && (s[:2] == "0o" || s[:2] == "0O") {
		s = s[2:]
	}
	n, err := strconv.ParseUint(s, 8, 32)
	if err != nil || n > 0o777 {
		return 0, false
	}
	return int(n), true
}

// invokeUmask is invoke under the chunk's umask keyword, as State.call
// runs the state function in set_umask(low["__umask__"]). The umask is
// the process's, as in Salt.
func (r *Runner) invokeUmask(ctx context.Context, c *stateCall) *ordered.Map {
	if m, ok := c.low.Value("__umask__").(int); ok {
		defer setUmask(m)()
	}
	return r.invoke(ctx, c)
}
