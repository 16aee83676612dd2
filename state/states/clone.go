package states

import "maps"

// Clone returns a registry holding r's functions, availability checks
// and aggregates, so a caller can add state modules of its own (the
// master's `salt` orchestration states) without mutating r.
func (r *Registry) Clone() *Registry {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := NewRegistry()
	maps.Copy(out.funcs, r.funcs)
	maps.Copy(out.virtual, r.virtual)
	if r.aggregates != nil {
		out.aggregates = maps.Clone(r.aggregates)
	}
	return out
}
