package states

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/brinesalt/brine/state/modules"
)

// Func is the Go body of a state function. A state that fails returns a
// Result with Result false; a Go error means the function could not run,
// which the runner reports as Salt reports an exception in a state.
type Func func(ctx context.Context, c *Call) (*Result, error)

// Function is one registered state function.
type Function struct {
	Name string // "module.function"
	Spec modules.Spec
	Fn   Func
}

// Registry maps state function names to functions.
type Registry struct {
	mu      sync.RWMutex
	funcs   map[string]*Function
	virtual map[string]func(env *modules.Env) (bool, string)
	// aggregates holds the modules' mod_aggregate functions.
	aggregates map[string]Aggregate
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{funcs: map[string]*Function{}, virtual: map[string]func(*modules.Env) (bool, string){}}
}

// Default is the registry that state packages fill from init().
var Default = NewRegistry()

// Register adds f; it panics on a malformed or duplicate name, both
// programmer errors found at init.
func (r *Registry) Register(f Function) {
	mod, fun, ok := strings.Cut(f.Name, ".")
	if !ok || mod == "" || fun == "" || f.Fn == nil {
		panic(fmt.Sprintf("states: bad registration %q", f.Name))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.funcs[f.Name]; dup {
		panic(fmt.Sprintf("states: %q registered twice", f.Name))
	}
	fc := f
	r.funcs[f.Name] = &fc
}

// Register adds f to Default.
func Register(f Function) { Default.Register(f) }

// SetVirtual sets the availability check of state module mod, Salt's
// __virtual__.
func (r *Registry) SetVirtual(mod string, fn func(env *modules.Env) (bool, string)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.virtual[mod] = fn
}

// Lookup returns the function called name when it exists and its module
// applies to env. The string is Salt's reason for a missing function
// (salt/loader/lazy.py missing_fun_string): "'m.f' is not available." or,
// for a module whose __virtual__ refused, "'m' __virtual__ returned
// False: <reason>".
func (r *Registry) Lookup(env *modules.Env, name string) (*Function, string) {
	r.mu.RLock()
	f := r.funcs[name]
	mod, _, _ := strings.Cut(name, ".")
	virt := r.virtual[mod]
	r.mu.RUnlock()
	if f == nil {
		return nil, fmt.Sprintf("'%s' is not available.", name)
	}
	if virt != nil {
		if ok, reason := virt(env); !ok {
			if reason == "" {
				return nil, fmt.Sprintf("'%s' __virtual__ returned False", mod)
			}
			return nil, fmt.Sprintf("'%s' __virtual__ returned False: %s", mod, reason)
		}
	}
	return f, ""
}

// Has reports whether name is registered and available.
func (r *Registry) Has(env *modules.Env, name string) bool {
	f, _ := r.Lookup(env, name)
	return f != nil
}

// Names lists the registered function names, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.funcs))
	for n := range r.funcs {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Required lists the parameters without a default, in order: the ones
// salt/state.py verify_data reports as "Missing parameter".
func (f *Function) Required() []string {
	var out []string
	for _, p := range f.Spec.Params {
		if !p.Optional {
			out = append(out, p.Name)
		}
	}
	return out
}
