// Package module is Salt's `pillar` execution module (salt/modules/pillar.py):
// items, data, raw, get, item, keys and ls. items (without keys) compiles
// a fresh pillar from pillar_roots; the others read the job's in-memory
// pillar unless given a pillarenv or saltenv.
package module

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/internal/saltyaml"
	"github.com/brinesalt/brine/state/apply"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/pillar"
)

func init() { Register(modules.Default) }

// notSet marks a parameter the caller did not pass (Salt's NOT_SET).
type notSet struct{}

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
		{Name: "pillar.get", Spec: modules.Spec{Params: []modules.Param{{Name: "key"}, opt("default", notSet{}),
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

// itemsFn is pillar.items: with keys it is pillar.item over the
// in-memory pillar (keyword arguments are then ignored, as in Salt);
// without, a fresh compilation with the pillar= override and pillarenv.
func itemsFn(ctx context.Context, c *modules.Call) (any, error) {
	if len(c.VarArgs) > 0 {
		return itemOf(memPillar(c), c.VarArgs, "", ":"), nil
	}
	var override *ordered.Map
	if p, ok := c.Kwargs.Get("pillar"); ok && modules.Truthy(p) {
		if modules.Truthy(c.Kwargs.Value("pillar_enc")) {
			return nil, modules.Errorf("Failed to decrypt pillar override: pillar_enc is not supported")
		}
		m, ok := p.(*ordered.Map)
		if !ok {
			// Salt's Pillar logs this and compiles without the override.
			logger(c.Env).Error("Pillar data must be a dictionary")
		}
		override = m
	}
	pillarenv, _ := c.Kwargs.Value("pillarenv").(string)
	if pillarenv == "" && modules.Truthy(c.Env.Opts.Value("pillarenv_from_saltenv")) {
		pillarenv, _ = c.Kwargs.Value("saltenv").(string)
		if pillarenv == "" {
			pillarenv, _ = c.Env.Opts.Value("saltenv").(string)
		}
	}
	return compileIn(ctx, c.Env, pillarenv, override)
}

// compileIn compiles the pillar, in pillarenv when it is set.
func compileIn(ctx context.Context, env *modules.Env, pillarenv string, override *ordered.Map) (*ordered.Map, error) {
	if pillarenv != "" {
		e := *env
		e.Opts = env.Opts.Copy()
		if e.Opts == nil {
			e.Opts = ordered.New()
		}
		e.Opts.Set("pillarenv", pillarenv)
		env = &e
	}
	return apply.CompilePillar(ctx, env, override)
}

// pillarFor is the in-memory pillar, or a fresh one when pillarenv or
// saltenv is given (Salt calls items(saltenv=..., pillarenv=...)).
func pillarFor(ctx context.Context, c *modules.Call, pillarenv, saltenv any) (*ordered.Map, error) {
	if pillarenv == nil && saltenv == nil {
		return memPillar(c), nil
	}
	pe, _ := pillarenv.(string)
	if pe == "" && modules.Truthy(c.Env.Opts.Value("pillarenv_from_saltenv")) {
		pe, _ = saltenv.(string)
	}
	return compileIn(ctx, c.Env, pe, nil)
}

func logger(env *modules.Env) *slog.Logger {
	if env.Log != nil {
		return env.Log
	}
	return slog.New(slog.DiscardHandler)
}

func memPillar(c *modules.Call) *ordered.Map {
	if c.Env.Pillar != nil {
		return c.Env.Pillar
	}
	return ordered.New()
}

// raw is pillar.raw: the whole in-memory pillar, or one top-level key
// (no traversal), {} when absent.
func raw(_ context.Context, c *modules.Call) (any, error) {
	if k := c.Arg("key"); modules.Truthy(k) {
		if v, ok := memPillar(c).Get(k); ok {
			return v, nil
		}
		return ordered.New(), nil
	}
	return memPillar(c), nil
}

// traverse is salt.utils.data.traverse_dict_and_list: a delimited key
// through mappings and lists; a list takes an index (negative ones
// too) or the first embedded mapping holding the key, and a missing
// mapping key is retried YAML-loaded ("1" finds the key 1).
func traverse(v any, key, delim string) (any, bool) {
	if delim == "" {
		delim = ":"
	}
	for _, part := range strings.Split(key, delim) {
		var ok bool
		switch x := v.(type) {
		case []any:
			v, ok = listStep(x, part)
		case *ordered.Map:
			v, ok = mapStep(x, part)
		}
		if !ok {
			return nil, false
		}
	}
	return v, true
}

func listStep(l []any, part string) (any, bool) {
	idx, err := strconv.Atoi(strings.TrimSpace(part))
	var k any = part
	if err == nil {
		k = idx
	}
	for _, e := range l {
		if m, ok := e.(*ordered.Map); ok {
			if n, ok := m.Get(k); ok {
				return n, true
			}
		}
	}
	if err != nil || idx < -len(l) || idx >= len(l) {
		return nil, false
	}
	if idx < 0 {
		idx += len(l)
	}
	return l[idx], true
}

func mapStep(m *ordered.Map, part string) (any, bool) {
	if n, ok := m.Get(part); ok {
		return n, true
	}
	loaded, err := saltyaml.Load([]byte(part), "<key>")
	if err != nil {
		return nil, false
	}
	if s, isStr := loaded.(string); isStr && s == part {
		return nil, false
	}
	switch loaded.(type) {
	case *ordered.Map, []any:
		return nil, false // unhashable: Python's TypeError
	}
	return m.Get(loaded)
}

// errKeyNotFound is Python's KeyError from pillar.get and pillar.keys.
func errKeyNotFound(key string) error {
	return fmt.Errorf("KeyError: 'Pillar key not found: %s'", key)
}

// get is pillar.get.
func get(ctx context.Context, c *modules.Call) (any, error) {
	key := c.Str("key")
	delim := c.Str("delimiter")
	def := c.Arg("default")
	raise := false
	if _, unset := def.(notSet); unset {
		def = ""
		raise = modules.Truthy(c.Env.Opts.Value("pillar_raise_on_missing"))
	}
	mergeLists := modules.Truthy(c.Env.Opts.Value("pillar_merge_lists"))
	if v := c.Arg("merge_nested_lists"); v != nil {
		mergeLists = modules.Truthy(v)
	}
	p, err := pillarFor(ctx, c, c.Arg("pillarenv"), c.Arg("saltenv"))
	if err != nil {
		return nil, err
	}
	if c.Bool("merge") {
		if v, merged := mergeDefault(c, p, key, delim, def, mergeLists); merged {
			return v, nil
		}
	}
	v, ok := traverse(p, key, delim)
	if !ok {
		if raise {
			return nil, errKeyNotFound(key)
		}
		return def, nil
	}
	return v, nil
}

// mergeDefault merges the pillar value over a mapping default, or
// extends a list default with it; merged is false (and Salt's error
// logged) when the types do not allow it.
func mergeDefault(c *modules.Call, p *ordered.Map, key, delim string, def any, mergeLists bool) (any, bool) {
	v, ok := traverse(p, key, delim)
	switch d := def.(type) {
	case *ordered.Map:
		if !ok {
			v = ordered.New()
		}
		if m, isMap := v.(*ordered.Map); isMap {
			return pillar.Update(ordered.DeepCopy(d).(*ordered.Map), m, mergeLists), true
		}
		logger(c.Env).Error(fmt.Sprintf("pillar.get: Default (%s) is a dict, but the returned pillar value (%s) is of type '%s'. Merge will be skipped.",
			py.Repr(d), py.Repr(v), py.TypeName(v)))
	case []any:
		if !ok {
			v = []any{}
		}
		if l, isList := v.([]any); isList {
			return pillar.MergeLists(d, l), true
		}
		logger(c.Env).Error(fmt.Sprintf("pillar.get: Default (%s) is a list, but the returned pillar value (%s) is of type '%s'. Merge will be skipped.",
			py.Repr(d), py.Repr(v), py.TypeName(v)))
	default:
		logger(c.Env).Error(fmt.Sprintf("pillar.get: Default (%s) is of type '%s', must be a dict or list to merge. Merge will be skipped.",
			py.Repr(def), py.TypeName(def)))
	}
	return nil, false
}

// item is pillar.item: each key traversed, default (default "") for the
// missing ones.
func item(ctx context.Context, c *modules.Call) (any, error) {
	delim := ":"
	if d, ok := c.Kwargs.Value("delimiter").(string); ok {
		delim = d
	}
	def, ok := c.Kwargs.Get("default")
	if !ok {
		def = ""
	}
	p, err := pillarFor(ctx, c, c.Kwargs.Value("pillarenv"), c.Kwargs.Value("saltenv"))
	if err != nil {
		return nil, err
	}
	return itemOf(p, c.VarArgs, def, delim), nil
}

func itemOf(p *ordered.Map, args []any, def any, delim string) *ordered.Map {
	out := ordered.New()
	for _, a := range args {
		if v, ok := traverse(p, ordered.KeyString(a), delim); ok {
			out.Set(a, v)
		} else {
			out.Set(a, def)
		}
	}
	return out
}

// keys is pillar.keys: the keys of the mapping at key.
func keys(_ context.Context, c *modules.Call) (any, error) {
	key := c.Str("key")
	v, ok := traverse(memPillar(c), key, c.Str("delimiter"))
	if !ok {
		return nil, errKeyNotFound(key)
	}
	m, isMap := v.(*ordered.Map)
	if !isMap {
		return nil, fmt.Errorf("ValueError: Pillar value in key %s is not a dict", key)
	}
	return append([]any{}, m.Keys()...), nil
}

// ls is pillar.ls: the top-level keys of pillar.items.
func ls(ctx context.Context, c *modules.Call) (any, error) {
	p, err := itemsFn(ctx, &modules.Call{Env: c.Env, Fun: c.Fun, Args: map[string]any{}, VarArgs: c.VarArgs, Kwargs: ordered.New()})
	if err != nil {
		return nil, err
	}
	return append([]any{}, p.(*ordered.Map).Keys()...), nil
}
