package modules

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Func is the Go body of an execution function. It returns a value in the
// ordered package's value model. A returned error means the function
// failed as a Python exception would in Salt (the caller turns it into a
// failed return with retcode 1).
type Func func(ctx context.Context, c *Call) (any, error)

// Param is one named parameter of a function's signature.
type Param struct {
	Name string
	// Default is used when the caller does not pass the parameter; it is
	// only meaningful when Optional is true.
	Default  any
	Optional bool
}

// Spec is a function's Python-style signature.
type Spec struct {
	Params  []Param
	VarArgs bool // accepts *args
	VarKw   bool // accepts **kwargs
}

// Function is one registered execution function.
type Function struct {
	Name string // "module.function"
	Doc  string // shown by sys.doc
	Spec Spec
	Fn   Func
	// Outputter names the outputter the function's return asks for, as
	// Salt modules declare __outputter__ (state functions: "highstate");
	// "" leaves the choice to the caller.
	Outputter string
}

// Module groups functions under one Salt module name and decides, like
// Salt's __virtual__, whether it applies to a host.
type Module struct {
	Name string
	// Virtual reports whether the module is available with the given
	// environment; nil means always. A non-empty reason explains a false.
	Virtual func(env *Env) (ok bool, reason string)
	funcs   map[string]*Function
}

// Registry maps function names to functions. It is safe for concurrent
// use after registration.
type Registry struct {
	mu   sync.RWMutex
	mods map[string]*Module
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{mods: map[string]*Module{}} }

// Default is the registry that module packages fill from init().
var Default = NewRegistry()

// SetVirtual sets the availability check of module mod in r, creating
// the module if needed.
func (r *Registry) SetVirtual(mod string, virtual func(env *Env) (bool, string)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.module(mod).Virtual = virtual
}

func (r *Registry) module(name string) *Module {
	m := r.mods[name]
	if m == nil {
		m = &Module{Name: name, funcs: map[string]*Function{}}
		r.mods[name] = m
	}
	return m
}

// Register adds f. It panics when the name is malformed or already taken:
// both are programmer errors found at init.
func (r *Registry) Register(f Function) {
	mod, fun, ok := strings.Cut(f.Name, ".")
	if !ok || mod == "" || fun == "" || f.Fn == nil {
		panic(fmt.Sprintf("modules: bad registration %q", f.Name))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.module(mod)
	if _, dup := m.funcs[fun]; dup {
		panic(fmt.Sprintf("modules: %q registered twice", f.Name))
	}
	fc := f
	m.funcs[fun] = &fc
}

// Register adds f to Default.
func Register(f Function) { Default.Register(f) }

// Lookup finds a function that is available in env. The error is an
// *UnavailableError carrying Salt's wording.
func (r *Registry) Lookup(env *Env, name string) (*Function, error) {
	mod, fun, _ := strings.Cut(name, ".")
	r.mu.RLock()
	m := r.mods[mod]
	var f *Function
	if m != nil {
		f = m.funcs[fun]
	}
	r.mu.RUnlock()
	if f == nil {
		return nil, &UnavailableError{Name: name}
	}
	if m.Virtual != nil {
		if ok, reason := m.Virtual(env); !ok {
			return nil, &UnavailableError{Name: name, Reason: reason}
		}
	}
	return f, nil
}

// Modules lists the names of the modules with functions registered in r,
// sorted.
func (r *Registry) Modules() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.mods))
	for name, m := range r.mods {
		if len(m.funcs) > 0 {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// Functions lists every function registered in module mod, sorted,
// whether or not the module applies to any host.
func (r *Registry) Functions(mod string) []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	m := r.mods[mod]
	if m == nil {
		return nil
	}
	out := make([]string, 0, len(m.funcs))
	for fun := range m.funcs {
		out = append(out, mod+"."+fun)
	}
	sort.Strings(out)
	return out
}

// Names lists the available functions, sorted, as sys.list_functions does.
func (r *Registry) Names(env *Env) []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []string
	for _, m := range r.mods {
		if m.Virtual != nil {
			if ok, _ := m.Virtual(env); !ok {
				continue
			}
		}
		for fun := range m.funcs {
			out = append(out, m.Name+"."+fun)
		}
	}
	sort.Strings(out)
	return out
}

// UnavailableError is returned for a function that does not exist or
// whose module does not apply to this host.
type UnavailableError struct {
	Name   string
	Reason string
}

// Error matches salt/loader/lazy.py missing_fun_string: "'foo.bar' is
// not available.", or "'foo' __virtual__ returned False: <reason>" when
// the module declined this host.
func (e *UnavailableError) Error() string {
	if e.Reason != "" {
		mod, _, _ := strings.Cut(e.Name, ".")
		return fmt.Sprintf("'%s' __virtual__ returned False: %s", mod, e.Reason)
	}
	return fmt.Sprintf("'%s' is not available.", e.Name)
}
