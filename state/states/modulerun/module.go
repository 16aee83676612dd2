// Package modulerun is Salt's `module` state module (salt/states/module.py):
// run, wait, watch and mod_watch call execution functions from a state.
//
// Salt 3006 picks the syntax per state, with no use_superseded option any
// more: when every argument key (but name) contains a dot, the state uses
// the new syntax, one key per function with its arguments as a list
//
//	ping:
//	  module.run:
//	    - test.ping: []
//	    - test.arg: [one, {kw: 1}]
//
// and otherwise the legacy one, where name is the function and the other
// keys are its arguments (m_name, m_fun, m_names, m_state and m_saltenv
// stand for arguments that clash with state keywords, args holds the
// *args list and kwargs the **kwargs mapping).
//
// Not supported: returner.
package modulerun

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/states"
)

func init() { Register(states.Default) }

// Register adds the module state functions to r.
func Register(r *states.Registry) {
	kw := modules.Spec{VarKw: true}
	r.Register(states.Function{Name: "module.run", Spec: kw, Fn: Run})
	r.Register(states.Function{Name: "module.mod_watch", Spec: kw, Fn: Run})
	wait := modules.Spec{Params: []modules.Param{{Name: "name"}}, VarKw: true}
	r.Register(states.Function{Name: "module.wait", Spec: wait, Fn: waitFn})
	r.Register(states.Function{Name: "module.watch", Spec: wait, Fn: waitFn})
}

func waitFn(_ context.Context, c *states.Call) (*states.Result, error) {
	return states.NewResult(c.Arg("name"), states.True, ""), nil
}

// Run is module.run (and its mod_watch alias).
func Run(ctx context.Context, c *states.Call) (*states.Result, error) {
	var keys []string
	for _, k := range c.Kwargs.StringKeys() {
		if k != "name" && k != "__reqs__" && k != "sfun" {
			keys = append(keys, k)
		}
	}
	legacy := len(keys) == 0 && c.Kwargs.Len() > 0
	for _, k := range keys {
		if !strings.Contains(k, ".") {
			legacy = true
		}
	}
	if legacy {
		return legacyRun(ctx, c)
	}
	return newRun(ctx, c)
}

// newRun is _run: every dotted key is a function to call.
func newRun(ctx context.Context, c *states.Call) (*states.Result, error) {
	var funcs []string
	var names []any
	for _, k := range c.Kwargs.StringKeys() {
		if k == "name" {
			continue
		}
		names = append(names, k)
		if strings.Contains(k, ".") {
			funcs = append(funcs, k)
		}
	}
	r := &states.Result{Name: names, Result: states.None, Changes: ordered.New()}
	if r.Name == nil {
		r.Name = []any{}
	}
	if len(funcs) == 0 {
		r.Comment, r.Result = "No function provided.", states.False
		return r, nil
	}
	var missing, tests []string
	for _, f := range funcs {
		f, _, _ = strings.Cut(f, ":")
		if _, err := c.Env.Registry.Lookup(c.Env, f); err != nil {
			missing = append(missing, f)
		} else if c.Env.Test {
			tests = append(tests, f)
		}
	}
	if len(missing) > 0 || len(tests) > 0 {
		var parts []string
		if len(missing) > 0 {
			parts = append(parts, fmt.Sprintf("Unavailable function%s: %s.", plr(len(missing)), strings.Join(missing, ", ")))
		}
		if len(tests) > 0 {
			parts = append(parts, fmt.Sprintf("Function%s %s to be executed.", plr(len(tests)), strings.Join(tests, ", ")))
		}
		r.Comment = strings.TrimSpace(strings.Join(parts, " "))
		if len(missing) > 0 {
			r.Result = states.False
		}
		return r, nil
	}
	var failures, success []string
	for _, f := range funcs {
		name, _, _ := strings.Cut(f, ":")
		ret, err := callFunction(ctx, c, name, c.Kwargs.Value(f))
		var ae *modules.ArgError
		var ie *modules.InvocationError
		switch {
		case errors.As(err, &ae) || errors.As(err, &ie):
			failures = append(failures, fmt.Sprintf("'%s' failed: %s", f, err.Error()))
			continue
		case err != nil:
			return nil, err
		}
		if !result(ret) {
			if m, ok := ret.(*ordered.Map); ok {
				cm, has := m.Get("comment")
				if !has {
					cm = "(error message N/A)"
				}
				failures = append(failures, fmt.Sprintf("'%s' failed: %s", f, py.Str(cm)))
			}
			if ret == false {
				failures = append(failures, fmt.Sprintf("'%s': False", f))
			}
			continue
		}
		shown := ret
		if m, ok := ret.(*ordered.Map); ok {
			shown = "Success"
			if cm, has := m.Get("comment"); has {
				shown = cm
			}
		}
		success = append(success, fmt.Sprintf("%s: %s", f, py.Str(shown)))
		r.Changes.Set(f, ret)
	}
	r.Comment = strings.Join(append(failures, success...), ", ")
	r.Result = states.TriOf(len(failures) == 0)
	return r, nil
}

// plr reproduces _run's "{plr}": Python formats len(x) > 1 or ” as
// "True" for several functions and "" for one.
func plr(n int) string {
	if n > 1 {
		return "True"
	}
	return ""
}

// callFunction is salt.utils.functools.call_function: mappings in the
// argument list are keyword arguments (required parameters among them
// become positional), everything else is positional.
func callFunction(ctx context.Context, c *states.Call, name string, argList any) (any, error) {
	f, err := c.Env.Registry.Lookup(c.Env, name)
	if err != nil {
		return nil, err
	}
	var items []any
	switch x := argList.(type) {
	case nil:
	case []any:
		items = x
	default:
		items = []any{x}
	}
	required := map[string]bool{}
	for _, p := range f.Spec.Params {
		if !p.Optional {
			required[p.Name] = true
		}
	}
	var args []any
	kw := ordered.New()
	asArg := map[string]any{}
	for _, it := range items {
		m, ok := it.(*ordered.Map)
		if !ok {
			args = append(args, it)
			continue
		}
		m.Range(func(k, v any) bool {
			if required[ordered.KeyString(k)] {
				asArg[ordered.KeyString(k)] = v
			} else {
				kw.Set(k, v)
			}
			return true
		})
	}
	for _, p := range f.Spec.Params {
		if v, ok := asArg[p.Name]; ok && !p.Optional {
			args = append(args, v)
		}
	}
	return c.Env.Run(ctx, name, args, kw)
}

// result is _get_result: a bool is itself, a mapping fails when any
// nested result is False or retcode non-zero.
func result(v any) bool {
	switch x := v.(type) {
	case bool:
		return x
	case *ordered.Map:
		return dictResult(x)
	}
	return true
}

func dictResult(m *ordered.Map) bool {
	ok := true
	m.Range(func(k, v any) bool {
		if (k == "result" && v == false) || (k == "retcode" && v != 0) {
			ok = false
			return false
		}
		if sub, isMap := v.(*ordered.Map); isMap {
			ok = dictResult(sub)
			return ok
		}
		return true
	})
	return ok
}

// legacyArg maps a parameter onto the keyword that carries it in the
// legacy syntax.
func legacyArg(name string) string {
	switch name {
	case "name", "fun", "names", "state", "saltenv":
		return "m_" + name
	}
	return name
}

// legacyRun is _legacy_run: name is the function, the other keys its
// arguments.
func legacyRun(ctx context.Context, c *states.Call) (*states.Result, error) {
	name := ordered.KeyString(c.Kwargs.Value("name"))
	r := states.NewResult(name, states.None, "")
	f, err := c.Env.Registry.Lookup(c.Env, name)
	if err != nil {
		r.Result, r.Comment = states.False, fmt.Sprintf("Module function %s is not available", name)
		return r, nil
	}
	if c.Env.Test {
		r.Comment = fmt.Sprintf("Module function %s is set to execute", name)
		return r, nil
	}
	kwargs := c.Kwargs.Copy()
	kwargs.Delete("name")
	args, res := legacyArgs(f, kwargs, r)
	if res != nil {
		return res, nil
	}
	nk := ordered.New()
	if f.Spec.VarArgs {
		if v, ok := kwargs.Get("args"); ok {
			l, isList := v.([]any)
			if !isList {
				r.Result, r.Comment = states.False, "'args' must be a list."
				return r, nil
			}
			args = append(args, l...)
		}
	}
	if f.Spec.VarKw {
		if v, ok := kwargs.Get("kwargs"); ok {
			m, isMap := v.(*ordered.Map)
			if !isMap {
				r.Result, r.Comment = states.False, "'kwargs' must be a dict."
				return r, nil
			}
			nk = m
		}
	}
	mret, err := c.Env.Run(ctx, name, args, nk)
	if err != nil {
		r.Result = states.False
		r.Comment = fmt.Sprintf("Module function %s threw an exception. Exception: %s", name, err.Error())
		return r, nil
	}
	r.Changes.Set("ret", mret)
	r.Comment = fmt.Sprintf("Module function %s executed", name)
	r.Result = states.TriOf(result(mret))
	return r, nil
}

// legacyArgs collects the positional arguments of f from kwargs, using
// defaults for the optional ones, or reports the missing ones.
func legacyArgs(f *modules.Function, kwargs *ordered.Map, r *states.Result) ([]any, *states.Result) {
	var args []any
	var missing []string
	for _, p := range f.Spec.Params {
		rarg := legacyArg(p.Name)
		v, ok := kwargs.Get(rarg)
		if !ok && p.Optional && rarg != p.Name {
			v, ok = kwargs.Get(p.Name)
		}
		switch {
		case ok:
			args = append(args, v)
		case p.Optional:
			args = append(args, p.Default)
		default:
			missing = append(missing, rarg)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		r.Result = states.False
		r.Comment = "The following arguments are missing: " + strings.Join(missing, " ")
		return nil, r
	}
	return args, nil
}
