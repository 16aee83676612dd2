package states

import (
	"context"
	"fmt"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
)

// Result is what a state function returns: Salt's ret dict.
type Result struct {
	Name    any
	Result  Tri
	Comment string
	Changes *ordered.Map
	// Warnings are reported under "warnings" when not empty.
	Warnings []any
	// Extra holds further keys a state adds to its return (rare).
	Extra *ordered.Map
}

// Tri is a state result: true, false or None (test mode, "would change").
type Tri int8

// The three results.
const (
	False Tri = iota
	True
	None
)

// TriOf converts a Go bool.
func TriOf(b bool) Tri {
	if b {
		return True
	}
	return False
}

// Value returns the result in the value model: true, false or nil.
func (t Tri) Value() any {
	switch t {
	case True:
		return true
	case None:
		return nil
	}
	return false
}

// NewResult returns a Result for name with empty changes.
func NewResult(name any, r Tri, comment string) *Result {
	return &Result{Name: name, Result: r, Comment: comment, Changes: ordered.New()}
}

// Call is one invocation of a state function.
type Call struct {
	// Env is the job's environment; Env.Test is the test flag of this call
	// (true for the test-mode prediction of a prereq as well).
	Env  *modules.Env
	Fun  *Function
	Args map[string]any
	// Kwargs holds the chunk's other keys when the function takes **kwargs.
	Kwargs *ordered.Map
	// Low is the low chunk being run (Salt's __low__); do not modify it.
	Low *ordered.Map
	// Reqs holds, for a mod_watch call, the requisite chunks by requisite
	// type (Salt's __low__["__reqs__"]).
	Reqs map[string][]*ordered.Map
	// Running returns the return of an already run state by tag (Salt's
	// __running__).
	Running func(tag string) (*ordered.Map, bool)
	// Saltenv is the environment of the chunk (Salt's __env__).
	Saltenv string
	// Template renders a template file for file.managed and friends
	// (salt/utils/templates.py): engine is "jinja" (others are not
	// supported), name the template's path for errors and relative
	// imports, and vars the `context`/`defaults` merged over Salt's
	// grains, pillar, opts, salt and saltenv. Nil when the job renders
	// no templates.
	Template TemplateFunc
}

// TemplateFunc renders src with a template engine; see Call.Template.
type TemplateFunc func(ctx context.Context, engine, src, name string, vars map[string]any) (string, error)

// Arg returns the bound value of parameter name.
func (c *Call) Arg(name string) any { return c.Args[name] }

// Str returns parameter name as Python's str() would print it ("" for None).
func (c *Call) Str(name string) string {
	switch v := c.Args[name].(type) {
	case nil:
		return ""
	case string:
		return v
	default:
		return ordered.KeyString(v)
	}
}

// Bool returns parameter name with Python truthiness.
func (c *Call) Bool(name string) bool { return modules.Truthy(c.Args[name]) }

// Kw returns a **kwargs value.
func (c *Call) Kw(name string) (any, bool) { return c.Kwargs.Get(name) }

// InvalidArgsError is format_call's SaltInvocationError for keys the
// function does not accept; Salt aborts the whole job with it
// ("Passed invalid arguments: ...").
type InvalidArgsError struct {
	Fun  string
	Keys []string
}

func (e *InvalidArgsError) Error() string {
	if len(e.Keys) == 1 {
		return fmt.Sprintf("'%s' is an invalid keyword argument for '%s'", e.Keys[0], e.Fun)
	}
	quoted := make([]string, len(e.Keys)-1)
	for i, k := range e.Keys[:len(e.Keys)-1] {
		quoted[i] = "'" + k + "'"
	}
	return fmt.Sprintf("%s and '%s' are invalid keyword arguments for '%s'",
		strings.Join(quoted, ", "), e.Keys[len(e.Keys)-1], e.Fun)
}

// Bind maps a low chunk onto f's signature as format_call does. internal
// reports the keys Salt never passes to a state function.
func (f *Function) Bind(low *ordered.Map, internal func(key string) bool) (args map[string]any, kwargs *ordered.Map, err error) {
	args = make(map[string]any, len(f.Spec.Params))
	used := map[string]bool{}
	for _, p := range f.Spec.Params {
		if v, ok := low.Get(p.Name); ok {
			args[p.Name] = v
			used[p.Name] = true
		} else if p.Optional {
			args[p.Name] = p.Default
		}
	}
	kwargs = ordered.New()
	var extra []string
	low.Range(func(k, v any) bool {
		key := ordered.KeyString(k)
		if used[key] || internal(key) {
			return true
		}
		if f.Spec.VarKw {
			kwargs.Set(key, v)
		} else {
			extra = append(extra, key)
		}
		return true
	})
	if len(extra) > 0 {
		return nil, nil, &InvalidArgsError{Fun: f.Name, Keys: extra}
	}
	return args, kwargs, nil
}

// Run calls f.
func (f *Function) Run(ctx context.Context, c *Call) (*Result, error) {
	c.Fun = f
	return f.Fn(ctx, c)
}
