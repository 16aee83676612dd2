package returners

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
)

// Func sends one job return (the ret dict of salt/minion.py
// _thread_return, with "id" and any ret_config/ret_kwargs) somewhere.
// env carries the minion's options, grains and pillar the returner
// reads its settings from.
type Func func(ctx context.Context, env *modules.Env, ret *ordered.Map) error

// Registry maps returner names to their functions.
type Registry struct {
	mu sync.RWMutex
	m  map[string]Func
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{m: map[string]Func{}} }

// Default holds the returners that register themselves in init.
var Default = NewRegistry()

// Register adds a returner; a duplicate name is a programming error.
func (r *Registry) Register(name string, f Func) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.m[name]; dup {
		panic("returners: duplicate returner " + name)
	}
	r.m[name] = f
}

// Lookup returns the returner registered under name.
func (r *Registry) Lookup(name string) (Func, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	f, ok := r.m[name]
	return f, ok
}

// Split is Salt's set(data["ret"].split(",")) in first-seen order, empty
// names dropped.
func Split(names string) []string {
	var out []string
	seen := map[string]bool{}
	for _, n := range strings.Split(names, ",") {
		n = strings.TrimSpace(n)
		if n != "" && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// Join is the comma-separated list of the returner names in values,
// each a string (itself comma-separated) or a list of strings, as Salt
// gathers a job's returners from several options.
func Join(values ...any) string {
	var parts []string
	for _, v := range values {
		switch x := v.(type) {
		case string:
			parts = append(parts, x)
		case []any:
			for _, p := range x {
				if s, ok := p.(string); ok {
					parts = append(parts, s)
				}
			}
		}
	}
	return strings.Join(Split(strings.Join(parts, ",")), ",")
}

// Send hands ret to every returner in names (comma-separated). A
// returner that is unknown or fails does not stop the others; each
// failure comes back as an error naming the returner, for the minion to
// log as Salt does.
func (r *Registry) Send(ctx context.Context, env *modules.Env, names string, ret *ordered.Map) []error {
	var errs []error
	for _, n := range Split(names) {
		f, ok := r.Lookup(n)
		if !ok {
			errs = append(errs, fmt.Errorf("returner %s.returner could not be loaded: %w", n, ErrUnknown))
			continue
		}
		if err := f(ctx, env, ret); err != nil {
			errs = append(errs, fmt.Errorf("returner %s: %w", n, err))
		}
	}
	return errs
}
