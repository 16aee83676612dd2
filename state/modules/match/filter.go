package match

import (
	"context"
	"fmt"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/state/modules"
)

// lookupFunc finds the matcher filter_by and search_by call for tgt_type.
// match.py looks the name up among the module's functions, so the list
// matcher is "list_" there and "list" is a KeyError.
func lookupFunc(tgtType any) (matchFunc, error) {
	name, _ := tgtType.(string)
	switch name {
	case "list_":
		return funcs["list"], nil
	case "list":
		return nil, modules.Errorf("KeyError: 'list'")
	case "filter_by", "search_by", "ifelse", "_load_matchers", "jinja_global":
		return nil, modules.Errorf("tgt_type %q is not a matcher", name)
	}
	if f, ok := funcs[name]; ok {
		return f, nil
	}
	return nil, modules.Errorf("KeyError: %s", py.Repr(tgtType))
}

// matchArgs is filter_by's `(key, minion_id) if minion_id else (key,)`:
// for the grain and pillar matchers the minion id lands in delimiter.
func matchArgs(key, minionID any) []any {
	if modules.Truthy(minionID) {
		return []any{key, minionID}
	}
	return []any{key}
}

func filterBy(ctx context.Context, c *modules.Call) (any, error) {
	lookup, ok := c.Arg("lookup").(*ordered.Map)
	if !ok {
		return nil, modules.Errorf("filter_by lookup must be a dictionary, not %s", py.TypeName(c.Arg("lookup")))
	}
	return filterLookup(ctx, c.Env, lookup, c.Arg("tgt_type"), c.Arg("minion_id"), c.Arg("merge"), c.Bool("merge_lists"), c.Arg("default"))
}

func filterLookup(ctx context.Context, env *modules.Env, lookup *ordered.Map, tgtType, minionID, merge any, mergeLists bool, def any) (any, error) {
	fn, err := lookupFunc(tgtType)
	if err != nil {
		return nil, err
	}
	for _, key := range lookup.Keys() {
		hit, err := fn(ctx, env, matchArgs(key, minionID))
		if err != nil {
			return nil, err
		}
		if !modules.Truthy(hit) {
			continue
		}
		val := lookup.Value(key)
		if !modules.Truthy(merge) {
			return val, nil
		}
		mm, ok := merge.(*ordered.Map)
		if !ok {
			return nil, modules.Errorf("filter_by merge argument must be a dictionary.")
		}
		if val == nil {
			return merge, nil
		}
		vm, ok := val.(*ordered.Map)
		if !ok {
			return nil, modules.Errorf("TypeError: Cannot update using non-dict types in dictupdate.update()")
		}
		return update(deepCopy(vm).(*ordered.Map), deepCopy(mm).(*ordered.Map), mergeLists), nil
	}
	return lookup.Value(def), nil
}

func searchBy(ctx context.Context, c *modules.Call) (any, error) {
	lookup, ok := c.Arg("lookup").(*ordered.Map)
	if !ok {
		return nil, modules.Errorf("search_by lookup must be a dictionary, not %s", py.TypeName(c.Arg("lookup")))
	}
	fn, err := lookupFunc(c.Arg("tgt_type"))
	if err != nil {
		return nil, err
	}
	var matches []any
	for _, key := range lookup.Keys() {
		targets, err := iterate(lookup.Value(key))
		if err != nil {
			return nil, err
		}
		for _, tgt := range targets {
			hit, err := fn(ctx, c.Env, matchArgs(tgt, c.Arg("minion_id")))
			if err != nil {
				return nil, err
			}
			if modules.Truthy(hit) {
				matches = append(matches, key) // once per matching target, as in Salt
			}
		}
	}
	if len(matches) == 0 {
		return nil, nil
	}
	return matches, nil
}

// iterate is Python's iteration: a list's items, a string's characters,
// a dict's keys.
func iterate(v any) ([]any, error) {
	switch x := v.(type) {
	case []any:
		return x, nil
	case string:
		out := []any{}
		for _, r := range x {
			out = append(out, string(r))
		}
		return out, nil
	case *ordered.Map:
		return x.Keys(), nil
	}
	return nil, modules.Errorf("TypeError: '%s' object is not iterable", py.TypeName(v))
}

const (
	ifelseDefault = "SALT_IFELSE_FUNCTION_DEFAULT"
	ifelseNothing = "SALT_IFELSE_MATCH_NOTHING"
)

// ifelse is match.ifelse(*args, tgt_type="compound", minion_id=None,
// merge=None, merge_lists=False): pairs of (target, value) then a
// default, run through filter_by.
func ifelse(ctx context.Context, c *modules.Call) (any, error) {
	kw := map[string]any{"tgt_type": "compound", "minion_id": nil, "merge": nil, "merge_lists": false}
	var err error
	c.Kwargs.Range(func(k, v any) bool {
		name := ordered.KeyString(k)
		if _, ok := kw[name]; !ok {
			err = &modules.ArgError{Fun: "match.ifelse", Reason: fmt.Sprintf("ifelse() got an unexpected keyword argument '%s'", name)}
			return false
		}
		kw[name] = v
		return true
	})
	if err != nil {
		return nil, err
	}
	args := c.VarArgs
	if len(args)%2 == 0 {
		return nil, modules.Errorf("The ifelse function must have an odd number of arguments!")
	}
	if len(args) == 1 {
		return args[0], nil
	}
	lookup := ordered.New()
	for i := 0; i+1 < len(args); i += 2 {
		key := args[i]
		switch key {
		case true:
			key = "*"
		case false:
			key = ifelseNothing
		}
		switch key.(type) {
		case []any, *ordered.Map:
			return nil, modules.Errorf("TypeError: unhashable type: '%s'", py.TypeName(key))
		}
		lookup.Set(key, args[i+1])
	}
	lookup.Set(ifelseDefault, args[len(args)-1])
	return filterLookup(ctx, c.Env, lookup, kw["tgt_type"], kw["minion_id"], kw["merge"], modules.Truthy(kw["merge_lists"]), ifelseDefault)
}

// update is salt.utils.dictupdate.update(dest, upd, merge_lists=...):
// nested dicts merge, lists are replaced or, with mergeLists, extended by
// the items not already present.
func update(dest, upd *ordered.Map, mergeLists bool) *ordered.Map {
	upd.Range(func(k, v any) bool {
		cur, _ := dest.Get(k)
		switch {
		case isMap(cur) && isMap(v):
			dest.Set(k, update(cur.(*ordered.Map), v.(*ordered.Map), mergeLists))
		case isList(cur) && isList(v) && mergeLists:
			merged := append([]any(nil), cur.([]any)...)
			for _, x := range v.([]any) {
				if !containsEqual(merged, x) {
					merged = append(merged, x)
				}
			}
			dest.Set(k, merged)
		default:
			dest.Set(k, v)
		}
		return true
	})
	return dest
}

func isMap(v any) bool  { _, ok := v.(*ordered.Map); return ok }
func isList(v any) bool { _, ok := v.([]any); return ok }

// containsEqual is Python's `x in list`, where 1 == 1.0 == True.
func containsEqual(list []any, x any) bool {
	for _, e := range list {
		if ordered.Equal(e, x) {
			return true
		}
	}
	return false
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopy(e)
		}
		return out
	case *ordered.Map:
		out := ordered.New()
		x.Range(func(k, v any) bool {
			out.Set(k, deepCopy(v))
			return true
		})
		return out
	}
	return v
}
