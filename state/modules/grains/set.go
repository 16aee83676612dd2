package grains

import (
	"context"
	"fmt"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/state/modules"
)

func isComplex(v any) bool {
	switch v.(type) {
	case *ordered.Map, []any:
		return true
	}
	return false
}

// set is grains.set: conservative nested assignment returning
// {comment, changes, result}.
func set(ctx context.Context, env *modules.Env, key string, val any, force, destructive bool, delim string) (any, error) {
	if delim == "" {
		delim = DefaultDelimiter
	}
	ret := ordered.FromPairs("comment", "", "changes", ordered.New(), "result", true)
	existing, exists := Traverse(env.Grains(), key, delim)
	if exists && ordered.Equal(existing, val) && (val != nil || !destructive) {
		ret.Set("comment", "Grain is already set")
		return ret, nil
	}
	value := val
	if exists && existing != nil && !force {
		if isComplex(existing) {
			return fail(ret, fmt.Sprintf("The key '%s' exists but is a dict or a list. Use 'force=True' to overwrite.", key)), nil
		}
		if isComplex(val) {
			return fail(ret, fmt.Sprintf("The key '%s' exists and the given value is a dict or a list. Use 'force=True' to overwrite.", key)), nil
		}
	}
	for strings.Contains(key, delim) {
		i := strings.LastIndex(key, delim)
		parent, rest := key[:i], key[i+len(delim):]
		cur := ordered.DeepCopy(get1(env.Grains(), parent, ordered.New(), delim))
		switch x := cur.(type) {
		case *ordered.Map:
			if value == nil && destructive {
				x.Delete(rest)
			} else {
				x.Set(rest, value)
			}
		case []any:
			updated := false
			for i, item := range x {
				if ordered.Equal(item, rest) {
					x[i] = ordered.FromPairs(rest, value)
					updated = true
				} else if m, ok := item.(*ordered.Map); ok && m.Has(rest) {
					m.Set(rest, value)
					updated = true
				}
			}
			if !updated {
				x = append(x, ordered.FromPairs(rest, value))
			}
			cur = x
		default:
			if ordered.Equal(cur, rest) || force {
				cur = ordered.FromPairs(rest, value)
			} else {
				return fail(ret, fmt.Sprintf("The key '%s' value is '%s', which is different from the provided key '%s'. Use 'force=True' to overwrite.", parent, py.Str(cur), rest)), nil
			}
		}
		key, value = parent, cur
	}
	out, err := setvals(ctx, env, ordered.FromPairs(key, value), destructive, true)
	if err != nil {
		return nil, err
	}
	if m, ok := out.(*ordered.Map); ok {
		ret.Set("changes", m)
	} else {
		return fail(ret, py.Str(out)), nil
	}
	return ret, nil
}

func fail(ret *ordered.Map, comment string) *ordered.Map {
	ret.Set("comment", comment)
	ret.Set("result", false)
	return ret
}
