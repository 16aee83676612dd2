package states

import (
	"fmt"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
)

// Aggregate is a state module's mod_aggregate (salt/state.py
// _mod_aggregate): given the low chunk about to run, every chunk of the
// run and a report of which tags already ran, it returns the low chunk
// to run in its place, typically with the work of other chunks folded
// in. It may mark those chunks (Salt sets "__agg__" on them).
type Aggregate func(low *ordered.Map, chunks []*ordered.Map, ran func(tag string) bool) *ordered.Map

// RegisterAggregate sets mod's mod_aggregate; it panics on a duplicate,
// a programmer error found at init.
func (r *Registry) RegisterAggregate(mod string, fn Aggregate) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.aggregates == nil {
		r.aggregates = map[string]Aggregate{}
	}
	if _, dup := r.aggregates[mod]; dup || fn == nil {
		panic(fmt.Sprintf("states: bad or duplicate mod_aggregate for %q", mod))
	}
	r.aggregates[mod] = fn
}

// Aggregator returns mod's mod_aggregate when mod has one and applies to
// env (its __virtual__).
func (r *Registry) Aggregator(env *modules.Env, mod string) (Aggregate, bool) {
	r.mu.RLock()
	fn := r.aggregates[mod]
	virt := r.virtual[mod]
	r.mu.RUnlock()
	if fn == nil {
		return nil, false
	}
	if virt != nil {
		if ok, _ := virt(env); !ok {
			return nil, false
		}
	}
	return fn, true
}
