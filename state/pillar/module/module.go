// Package module is Salt's `pillar` execution module (salt/modules/pillar.py):
// items, data, raw, get, item, keys and ls. items compiles a fresh pillar
// from pillar_roots; the others read the job's in-memory pillar.
package module

import (
	"context"
	"fmt"
	"strings"

	"github.com/brinesalt/brine/state/modules"
	statemod "github.com/brinesalt/brine/state/modules/state"
	"github.com/brinesalt/brine/state/ordered"
	"github.com/brinesalt/brine/state/pillar"
)

func init() { Register(modules.Default) }

func opt(name string, def any) modules.Param {
	return modules.Param{Name: name, Optional: true, Default: def}
}

// Register adds the pillar functions to r.
func Register(r *modules.Registry) {
	items := modules.Spec{VarArgs: true, VarKw: true}
	for _, f := range []modules.Function{
		{Name: "pillar.items", Spec: items, Fn: itemsFn},
		{Name: "pillar.data", Spec: items, Fn: itemsFn},
		{Name: "pillar.raw", Spec: modules.Spec{Params: []modules.Param{opt("key", nil)}}, Fn: raw},
		{Name: "pillar.get", Spec: modules.Spec{Params: []modules.Param{{Name: "key"}, opt("default", ""),
			opt("merge", false), opt("merge_nested_lists", nil), opt("delimiter", ":"),
			opt("pillarenv", nil), opt("saltenv", nil)}}, Fn: get},
		{Name: "pillar.item", Spec: modules.Spec{VarArgs: true, VarKw: true}, Fn: item},
		{Name: "pillar.keys", Spec: modules.Spec{Params: []modules.Param{{Name: "key"}, opt("delimiter", ":")}}, Fn: keys},
		{Name: "pillar.ls", Spec: modules.Spec{VarArgs: true}, Fn: ls},
	} {
		f.Doc = "Salt's " + f.Name
		if _, err := r.Lookup(nil, f.Name); err == nil {
			continue // a fuller pillar module is linked in
		}
		r.Register(f)
	}
}

func itemsFn(ctx context.Context, c *modules.Call) (any, error) {
	var override *ordered.Map
	if p, ok := c.Kwargs.Get("pillar"); ok && p != nil {
		m, ok := p.(*ordered.Map)
		if !ok {
			return nil, modules.Invalidf("Pillar data must be formatted as a dictionary")
		}
		override = m
	}
	p, err := statemod.CompilePillar(ctx, c.Env, override)
	if err != nil {
		return nil, err
	}
	if len(c.VarArgs) > 0 {
		out := ordered.New()
		for _, a := range c.VarArgs {
			k := ordered.KeyString(a)
			if v, ok := p.Get(k); ok {
				out.Set(k, v)
			}
		}
		return out, nil
	}
	return p, nil
}

func memPillar(c *modules.Call) *ordered.Map {
	if c.Env.Pillar != nil {
		return c.Env.Pillar
	}
	return ordered.New()
}

func raw(_ context.Context, c *modules.Call) (any, error) {
	if k := c.Arg("key"); k != nil {
		v, _ := traverse(memPillar(c), ordered.KeyString(k), ":")
		return v, nil
	}
	return memPillar(c), nil
}

// traverse follows a delimited key through mappings and lists
// (salt.utils.data.traverse_dict_and_list).
func traverse(v any, key, delim string) (any, bool) {
	for _, part := range strings.Split(key, delim) {
		switch x := v.(type) {
		case *ordered.Map:
			n, ok := x.Get(part)
			if !ok {
				return nil, false
			}
			v = n
		case []any:
			var i int
			if _, err := fmt.Sscanf(part, "%d", &i); err != nil || i < 0 || i >= len(x) {
				found := false
				for _, e := range x {
					if m, ok := e.(*ordered.Map); ok {
						if n, ok := m.Get(part); ok {
							v, found = n, true
							break
						}
					}
				}
				if !found {
					return nil, false
				}
				continue
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

func get(_ context.Context, c *modules.Call) (any, error) {
	delim := c.Str("delimiter")
	if delim == "" {
		delim = ":"
	}
	def := c.Arg("default")
	v, ok := traverse(memPillar(c), c.Str("key"), delim)
	if c.Bool("merge") {
		switch d := def.(type) {
		case *ordered.Map:
			if m, isMap := v.(*ordered.Map); ok && isMap {
				return pillar.Merge(d, m), nil
			}
		case []any:
			if l, isList := v.([]any); ok && isList {
				out := append([]any(nil), d...)
				for _, x := range l {
					out = append(out, x)
				}
				return out, nil
			}
		}
	}
	if !ok {
		return def, nil
	}
	return v, nil
}

func item(_ context.Context, c *modules.Call) (any, error) {
	out := ordered.New()
	delim := ":"
	if d, ok := c.Kwargs.Value("delimiter").(string); ok {
		delim = d
	}
	def := c.Kwargs.Value("default")
	if def == nil {
		def = ""
	}
	for _, a := range c.VarArgs {
		k := ordered.KeyString(a)
		if v, ok := traverse(memPillar(c), k, delim); ok {
			out.Set(k, v)
		} else {
			out.Set(k, def)
		}
	}
	return out, nil
}

func keys(_ context.Context, c *modules.Call) (any, error) {
	v, ok := traverse(memPillar(c), c.Str("key"), c.Str("delimiter"))
	m, isMap := v.(*ordered.Map)
	if !ok || !isMap {
		return nil, modules.Errorf("Pillar key is not a dictionary: %s", c.Str("key"))
	}
	out := []any{}
	for _, k := range m.Keys() {
		out = append(out, k)
	}
	return out, nil
}

func ls(ctx context.Context, c *modules.Call) (any, error) {
	p, err := itemsFn(ctx, &modules.Call{Env: c.Env, Fun: c.Fun, Args: map[string]any{}, VarArgs: c.VarArgs, Kwargs: ordered.New()})
	if err != nil {
		return nil, err
	}
	out := []any{}
	for _, k := range p.(*ordered.Map).Keys() {
		out = append(out, k)
	}
	return out, nil
}
