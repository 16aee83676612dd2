package run

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
)

// slotPrefix marks an argument computed when the state runs
// (salt/state.py format_slots): `__slot__:salt:mod.fun(args)`, with an
// optional `.path.in.result` after the call and `~ text` to append.
const slotPrefix = "__slot__:"

// formatSlots replaces the slots in a state's bound arguments: string
// arguments, the values of a mapping argument, and the strings and
// mapping values in a list argument, as format_slots does.
func (r *Runner) formatSlots(ctx context.Context, env *modules.Env, args map[string]any, kwargs *ordered.Map) error {
	var err error
	eval := func(v any) any {
		s, ok := v.(string)
		if !ok || !strings.HasPrefix(s, slotPrefix) || err != nil {
			return v
		}
		var out any
		out, err = r.evalSlot(ctx, env, s)
		return out
	}
	fill := func(v any) any {
		switch x := v.(type) {
		case *ordered.Map:
			for _, k := range x.Keys() {
				x.Set(k, eval(x.Value(k)))
			}
		case []any:
			for i, item := range x {
				if m, ok := item.(*ordered.Map); ok {
					for _, k := range m.Keys() {
						m.Set(k, eval(m.Value(k)))
					}
				} else {
					x[i] = eval(item)
				}
			}
		default:
			return eval(v)
		}
		return v
	}
	for k, v := range args {
		args[k] = fill(v)
	}
	if kwargs != nil {
		for _, k := range kwargs.Keys() {
			kwargs.Set(k, fill(kwargs.Value(k)))
		}
	}
	return err
}

// evalSlot is State.__eval_slot. A slot that is not `__slot__:salt:` or
// whose function is unknown stays as it is (Salt logs a warning); the
// function's arguments reach it as the strings parse_function makes of
// them.
func (r *Runner) evalSlot(ctx context.Context, env *modules.Env, slot string) (any, error) {
	parts := strings.SplitN(slot, ":", 3)
	if len(parts) != 3 || parts[1] != "salt" {
		r.log().Warn("Malformed slot: " + slot)
		return slot, nil
	}
	fun, args, kwargs, ok := parseFunction(parts[2])
	if !ok || fun == "" || env.Registry == nil {
		r.log().Warn("Malformed slot: " + slot)
		return slot, nil
	}
	if _, err := env.Registry.Lookup(env, fun); err != nil {
		r.log().Warn("Malformed slot: " + slot)
		return slot, nil
	}
	ret, err := env.Run(ctx, fun, args, kwargs)
	if err != nil {
		return nil, fmt.Errorf("slot %s: %w", slot, err)
	}
	text, appendText, hasAppend := strings.Cut(parts[2], "~")
	if i := strings.LastIndex(text, ")"); i >= 0 && i+1 < len(text) {
		_, path, found := strings.Cut(text[i+1:], ".")
		if !found {
			return nil, fmt.Errorf("slot %s: no '.' before the path into the result", slot)
		}
		ret = traverseDictAndList(ret, strings.TrimSpace(path), ".")
	}
	if hasAppend {
		if s, ok := ret.(string); ok {
			ret = s + strings.TrimSpace(appendText)
		} else {
			r.log().Error("Ignoring slot append, slot result is not a string")
		}
	}
	return ret, nil
}

// traverseDictAndList is salt.utils.data.traverse_dict_and_list with
// default None: keys into mappings, indexes into lists, and a key that
// is not an index looked up in the mappings a list holds.
func traverseDictAndList(v any, key, delim string) any {
	for _, each := range strings.Split(key, delim) {
		switch x := v.(type) {
		case *ordered.Map:
			next, ok := x.Get(each)
			if !ok {
				if n, err := strconv.Atoi(each); err == nil {
					next, ok = x.Get(n)
				}
			}
			if !ok {
				return nil
			}
			v = next
		case []any:
			v = listStep(x, each)
		default:
			return nil
		}
	}
	return v
}

func listStep(l []any, each string) any {
	idx, err := strconv.Atoi(each)
	for _, e := range l {
		if m, ok := e.(*ordered.Map); ok {
			if err == nil {
				if v, ok := m.Get(idx); ok {
					return v
				}
			} else if v, ok := m.Get(each); ok {
				return v
			}
		}
	}
	if err != nil || idx >= len(l) || idx < -len(l) {
		return nil
	}
	if idx < 0 {
		idx += len(l)
	}
	return l[idx]
}
