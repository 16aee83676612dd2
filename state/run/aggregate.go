package run

import (
	"context"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/keyword"
)

// modAggregate is salt/state.py _mod_aggregate, run on every chunk
// before its requisites are checked: when aggregation is on for the
// chunk's module (the chunk's `aggregate` key, else the state_aggregate
// option: True for every module, or a list of module names), the
// module's mod_aggregate folds other chunks into this one, and their
// requisites become this chunk's.
func (r *Runner) modAggregate(ctx context.Context, low Chunk) Chunk {
	opt, ok := low.Get("aggregate")
	if !ok {
		opt = r.stateAggregate(ctx)
	}
	mod := str(low.Value("state"))
	var mods []any
	switch x := opt.(type) {
	case bool:
		if !x {
			return low
		}
		mods = []any{mod}
	case []any:
		mods = x
	default:
		return low
	}
	if !containsStr(mods, mod) || truthy(low, "__agg__") {
		return low
	}
	agg, ok := r.States.Aggregator(r.Env, mod)
	if !ok {
		return low
	}
	// Salt marks the chunk before aggregating, so mod_aggregate skips it.
	low.Set("__agg__", true)
	low = agg(low, r.chunks, r.running.Has)
	return r.aggregateRequisites(low)
}

// stateAggregate is config.option("state_aggregate"), read once a run.
func (r *Runner) stateAggregate(ctx context.Context) any {
	if r.aggOpt == nil {
		var v any = false
		if r.Env != nil && r.Env.Registry != nil {
			if got, err := r.Env.Run(ctx, "config.option", []any{"state_aggregate"}, nil); err == nil && got != nil {
				v = got
			}
		}
		r.aggOpt = &v
	}
	return *r.aggOpt
}

// aggregateRequisites is _aggregate_requisites: the requisites of the
// other aggregated chunks of the same module replace low's own. As in
// Salt, the first such chunk's list is the one extended, so that chunk
// sees the others' requisites too.
func (r *Runner) aggregateRequisites(low Chunk) Chunk {
	type gathered struct {
		list  []any
		owner Chunk // the chunk whose list Salt extends in place
	}
	reqs := map[string]*gathered{}
	var kinds []string
	for _, c := range r.chunks {
		if !ordered.Equal(c.Value("state"), low.Value("state")) || !truthy(c, "__agg__") ||
			ordered.Equal(low.Value("name"), c.Value("name")) {
			continue
		}
		for _, k := range keyword.RequisiteKeywords() {
			v, ok := c.Get(k)
			if !ok {
				continue
			}
			l, _ := v.([]any)
			if g, ok := reqs[k]; ok {
				g.list = append(g.list, l...)
				g.owner.Set(k, g.list)
				continue
			}
			reqs[k] = &gathered{list: l, owner: c}
			kinds = append(kinds, k)
		}
	}
	for _, k := range kinds {
		low.Set(k, reqs[k].list)
	}
	return low
}

func containsStr(l []any, s string) bool {
	for _, v := range l {
		if str(v) == s {
			return true
		}
	}
	return false
}
