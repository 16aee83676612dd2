package pillar

import (
	"log/slog"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
)

// The merging strategies of pillar_source_merging_strategy
// (salt/utils/dictupdate.py merge).
const (
	StrategySmart     = "smart"
	StrategyRecurse   = "recurse"
	StrategyAggregate = "aggregate"
	StrategyOverwrite = "overwrite"
	StrategyList      = "list"
	StrategyNone      = "none"
)

// Strategy is how pillar sources merge: Salt's
// pillar_source_merging_strategy (Name), pillar_merge_lists
// (MergeLists) and, for "smart", the renderer option (Renderer).
type Strategy struct {
	Name       string
	Renderer   string
	MergeLists bool
	// Log receives the warning about an unknown strategy; nil discards it.
	Log *slog.Logger
}

// resolve is the strategy merge() applies: "smart" is "aggregate" when
// the renderer pipe ends in yamlex, else "recurse"; "" is "smart".
func (s Strategy) resolve() string {
	name := s.Name
	if name == "" {
		name = StrategySmart
	}
	if name != StrategySmart {
		return name
	}
	r := s.Renderer
	if r == "" {
		r = "yaml"
	}
	parts := strings.Split(r, "|")
	if parts[len(parts)-1] == "yamlex" || strings.HasPrefix(r, "yamlex_") {
		return StrategyAggregate
	}
	return StrategyRecurse
}

// Merge merges b over a with the strategy, as dictupdate.merge does.
// Neither a nor b is modified; the result shares no mappings with a.
func (s Strategy) Merge(a, b *ordered.Map) *ordered.Map {
	if a == nil {
		a = ordered.New()
	}
	if b == nil {
		b = ordered.New()
	}
	switch name := s.resolve(); name {
	case StrategyList:
		return mergeList(a, b)
	case StrategyRecurse:
		return MergeRecurse(a, b, s.MergeLists)
	case StrategyAggregate, StrategyOverwrite:
		// Without yamlex's !aggregate tags, merge_aggregate only merges
		// the root mapping, and merge_overwrite replaces b's top-level keys
		// before recursing: both come down to a shallow update.
		return shallowUpdate(a, b)
	case StrategyNone:
		return MergeRecurse(a, b, false)
	default:
		if s.Log != nil {
			s.Log.Warn("Unknown merging strategy '" + name + "', fallback to recurse")
		}
		return MergeRecurse(a, b, false)
	}
}

// Merge merges b over a recursively without merging lists: the default
// "smart" strategy with the yaml renderer. a is not modified.
func Merge(a, b *ordered.Map) *ordered.Map { return MergeRecurse(a, b, false) }

// MergeRecurse is dictupdate.merge_recurse: a deep copy of a updated
// recursively with b. Mappings merge; with mergeLists, a list in b
// extends the list in a with its items a does not hold yet; anything
// else in b replaces the value in a.
func MergeRecurse(a, b *ordered.Map, mergeLists bool) *ordered.Map {
	return Update(ordered.DeepCopy(a).(*ordered.Map), b, mergeLists)
}

// Update is dictupdate.update: it merges upd into dest in place and
// returns dest. Values taken from upd are deep-copied so dest never
// shares mappings with upd.
func Update(dest, upd *ordered.Map, mergeLists bool) *ordered.Map {
	upd.Range(func(k, v any) bool {
		cur, _ := dest.Get(k)
		switch dv := cur.(type) {
		case *ordered.Map:
			if vm, ok := v.(*ordered.Map); ok {
				dest.Set(k, Update(dv, vm, mergeLists))
				return true
			}
		case []any:
			if vl, ok := v.([]any); ok && mergeLists {
				dest.Set(k, MergeLists(dv, vl))
				return true
			}
		}
		dest.Set(k, ordered.DeepCopy(v))
		return true
	})
	return dest
}

// MergeLists returns a followed by the items of b that a does not hold,
// compared with Python's ==. Duplicates within b are kept, as Salt checks
// membership against a only.
func MergeLists(a, b []any) []any {
	out := ordered.DeepCopy(a).([]any)
	if out == nil {
		out = []any{}
	}
	for _, x := range b {
		if !pyIn(x, a) {
			out = append(out, ordered.DeepCopy(x))
		}
	}
	return out
}

// shallowUpdate replaces a's top-level keys with b's.
func shallowUpdate(a, b *ordered.Map) *ordered.Map {
	out := ordered.DeepCopy(a).(*ordered.Map)
	b.Range(func(k, v any) bool { out.Set(k, ordered.DeepCopy(v)); return true })
	return out
}

// mergeList is dictupdate.merge_list: keys of a that b also has become
// [a's value, b's value]; keys only in b are dropped.
func mergeList(a, b *ordered.Map) *ordered.Map {
	out := ordered.New()
	a.Range(func(k, v any) bool {
		if bv, ok := b.Get(k); ok {
			out.Set(k, []any{ordered.DeepCopy(v), ordered.DeepCopy(bv)})
		} else {
			out.Set(k, ordered.DeepCopy(v))
		}
		return true
	})
	return out
}

func pyIn(x any, l []any) bool {
	for _, y := range l {
		if ordered.Equal(x, y) {
			return true
		}
	}
	return false
}
