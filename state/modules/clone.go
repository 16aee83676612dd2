package modules

import (
	"maps"
	"slices"
)

// CloneWithout returns a registry holding r's modules except the named
// ones, sharing their functions: a caller that binds its own version of a
// module (the master's orchestration binds `state` to a state registry
// with the `salt` states) starts from the host's functions without
// mutating r.
func (r *Registry) CloneWithout(skip ...string) *Registry {
	out := NewRegistry()
	r.mu.RLock()
	defer r.mu.RUnlock()
	for name, m := range r.mods {
		if slices.Contains(skip, name) {
			continue
		}
		out.mods[name] = &Module{Name: m.Name, Virtual: m.Virtual, funcs: maps.Clone(m.funcs)}
	}
	return out
}
