// Package sys is Salt's sys execution module (salt/modules/sysmod.py):
// introspection of the loaded execution functions, their docs and
// signatures. The state, runner, returner and renderer variants are not
// here: those registries live outside the thin binary.
package sys

import (
	"context"
	"sort"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/modules/grains"
)

func reg(name, doc string, spec modules.Spec, fn modules.Func) {
	modules.Register(modules.Function{Name: "sys." + name, Doc: doc, Spec: spec, Fn: fn})
}

func init() {
	star := modules.Spec{VarArgs: true}
	reg("list_functions", "List the available functions, optionally only those of the given modules or matching globs.",
		modules.Spec{VarArgs: true, VarKw: true}, listFunctions)
	reg("list_modules", "List the available modules, optionally filtered by names or globs.", star, listModules)
	reg("doc", "Return the docs of all functions, or of the given modules, functions or globs.", star, doc)
	reg("argspec", "Return the signatures of a module's functions (or of functions matching a glob) as {args, defaults, varargs, kwargs}.",
		modules.Spec{Params: []modules.Param{{Name: "module", Default: "", Optional: true}}}, argspec)
	reg("reload_modules", "Tell the minion to reload its modules; always True, as Brine's are compiled in.",
		modules.Spec{}, func(context.Context, *modules.Call) (any, error) { return true, nil })
}

func names(c *modules.Call) []string { return c.Env.Registry.Names(c.Env) }

func strArgs(c *modules.Call) []string {
	out := make([]string, 0, len(c.VarArgs))
	for _, a := range c.VarArgs {
		switch x := a.(type) {
		case string:
			out = append(out, x)
		default:
			out = append(out, ordered.KeyString(x))
		}
	}
	return out
}

func listFunctions(_ context.Context, c *modules.Call) (any, error) {
	all := names(c)
	args := strArgs(c)
	if len(args) == 0 {
		return toAny(all), nil
	}
	set := map[string]bool{}
	for _, m := range args {
		for _, f := range all {
			if strings.ContainsAny(m, "*.") {
				if grains.Fnmatch(m, f) {
					set[f] = true
				}
			} else if strings.HasPrefix(f, m+".") {
				set[f] = true
			}
		}
	}
	return sortedKeys(set), nil
}

func listModules(_ context.Context, c *modules.Call) (any, error) {
	set := map[string]bool{}
	args := strArgs(c)
	for _, f := range names(c) {
		mod, _, _ := strings.Cut(f, ".")
		if len(args) == 0 {
			set[mod] = true
			continue
		}
		for _, m := range args {
			if strings.Contains(m, "*") && grains.Fnmatch(m, f) || mod == m {
				set[mod] = true
			}
		}
	}
	return sortedKeys(set), nil
}

func doc(_ context.Context, c *modules.Call) (any, error) {
	var selected []string
	args := strArgs(c)
	for _, f := range names(c) {
		if len(args) == 0 {
			selected = append(selected, f)
			continue
		}
		for _, m := range args {
			if docMatch(m, f) {
				selected = append(selected, f)
				break
			}
		}
	}
	out := ordered.New()
	for _, f := range selected {
		if fn, err := c.Env.Registry.Lookup(c.Env, f); err == nil {
			out.Set(f, fn.Doc)
		}
	}
	return out, nil
}

// docMatch is sys.doc's selection: globs, or the exact name, or the
// module prefix ("sys" and "sys." select sys.*, not sysctl.*).
func docMatch(m, f string) bool {
	if strings.Contains(m, "*") {
		return grains.Fnmatch(m, f)
	}
	target := m
	if m != "" && !strings.HasSuffix(m, ".") {
		target = m + "."
	}
	return f == m || strings.HasPrefix(f, target)
}

func argspec(_ context.Context, c *modules.Call) (any, error) {
	module := c.Str("module")
	out := ordered.New()
	for _, f := range names(c) {
		var match bool
		if strings.ContainsAny(module, "*.") {
			match = grains.Fnmatch(module, f)
		} else {
			match = strings.HasPrefix(f, module+".")
		}
		if !match {
			continue
		}
		fn, err := c.Env.Registry.Lookup(c.Env, f)
		if err != nil {
			continue
		}
		out.Set(f, Argspec(fn.Spec))
	}
	return out, nil
}

// Argspec renders a signature in salt.utils.args.argspec_report's shape:
// args and defaults as lists or None, varargs and kwargs True or None.
func Argspec(s modules.Spec) *ordered.Map {
	var args, defs []any
	for _, p := range s.Params {
		args = append(args, p.Name)
		if p.Optional {
			defs = append(defs, p.Default)
		}
	}
	m := ordered.New()
	m.Set("args", listOrNil(args))
	m.Set("defaults", listOrNil(defs))
	m.Set("varargs", trueOrNil(s.VarArgs))
	m.Set("kwargs", trueOrNil(s.VarKw))
	return m
}

func listOrNil(l []any) any {
	if len(l) == 0 {
		return nil
	}
	return l
}

func trueOrNil(b bool) any {
	if b {
		return true
	}
	return nil
}

func toAny(s []string) []any {
	out := make([]any, len(s))
	for i, x := range s {
		out[i] = x
	}
	return out
}

func sortedKeys(set map[string]bool) []any {
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return toAny(keys)
}
