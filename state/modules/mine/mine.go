// Package mine is Salt's mine execution module (salt/modules/mine.py):
// minions run the functions of mine_functions and store their returns
// on the master (_mine), where other minions read them (_mine_get),
// also from templates as salt['mine.get']. With file_client: local the
// mine lives in the minion's own datastore (the data module's
// mine_cache key), as Salt's masterless mine does.
package mine

import (
	"context"
	"fmt"

	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/minedata"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/target"
)

func init() {
	p := func(name string, def any) modules.Param {
		return modules.Param{Name: name, Default: def, Optional: true}
	}
	modules.Register(modules.Function{Name: "mine.update",
		Doc:  "Run the mine_functions (minion config, master config in pillar, pillar) and send their returns to the master's mine.",
		Spec: modules.Spec{Params: []modules.Param{p("clear", false), p("mine_functions", nil)}}, Fn: update})
	modules.Register(modules.Function{Name: "mine.send",
		Doc:  "Run one function (mine_function=, default the name) with the other arguments and store its return in the mine under name.",
		Spec: modules.Spec{Params: []modules.Param{{Name: "name"}}, VarArgs: true, VarKw: true}, Fn: send})
	modules.Register(modules.Function{Name: "mine.get",
		Doc:  "Get the mine data of fun (a function, a comma-separated string or a list) from the minions tgt matches.",
		Spec: modules.Spec{Params: []modules.Param{{Name: "tgt"}, {Name: "fun"}, p("tgt_type", "glob"), p("exclude_minion", false)}}, Fn: get})
	modules.Register(modules.Function{Name: "mine.delete",
		Doc:  "Remove one function's data from this minion's mine.",
		Spec: modules.Spec{Params: []modules.Param{{Name: "fun"}}}, Fn: deleteFun})
	modules.Register(modules.Function{Name: "mine.flush",
		Doc: "Remove all of this minion's mine data.", Fn: flush})
	modules.Register(modules.Function{Name: "mine.valid",
		Doc: "List the valid entries of the mine_functions configuration.", Fn: valid})
}

// local reports a masterless minion (file_client: local).
func local(env *modules.Env) bool {
	fc, _ := env.Opts.Value("file_client").(string)
	return fc == "local"
}

func minionID(env *modules.Env) string {
	id, _ := env.Opts.Value("id").(string)
	return id
}

// sendLoad sends a _mine, _mine_delete or _mine_flush load. Salt fires
// it on the minion's event bus and answers True without waiting for the
// master; Brine sends it and answers the master's reply, so a mine that
// did not reach the master is not reported stored.
func sendLoad(ctx context.Context, env *modules.Env, load *ordered.Map) (any, error) {
	ch, err := env.Master()
	if err != nil {
		return nil, err
	}
	load.Set("id", minionID(env))
	ret, err := ch.MasterRequest(ctx, load)
	if err != nil {
		env.Log.Error("Could not send the mine data to the master", logattr.Err, err)
		return false, nil
	}
	return ret, nil
}

// store is _mine_store: into the local datastore, or to the master.
func store(ctx context.Context, env *modules.Env, data *ordered.Map, clear bool) (any, error) {
	if local(env) {
		if !clear {
			if old, ok := loadCache(env); ok {
				data.Range(func(k, v any) bool { old.Set(k, v); return true })
				data = old
			}
		}
		return saveCache(env, data)
	}
	return sendLoad(ctx, env, ordered.FromPairs("cmd", "_mine", "data", data, "clear", clear))
}

// functionDef is salt.utils.mine.parse_function_definition.
type functionDef struct {
	name   string
	args   []any
	kwargs *ordered.Map
	acl    *ordered.Map // allow_tgt, allow_tgt_type when set
}

// ParseDefinition is salt.utils.mine.parse_function_definition for a
// mine_functions entry (a list of arguments and one-key mappings, or a
// mapping of keyword arguments): the function it names with
// mine_function ("" for the entry's own name), its arguments, and its
// allow_tgt ACL.
func ParseDefinition(v any) (name string, args []any, kwargs, acl *ordered.Map) {
	d := parseDefinition(ordered.DeepCopy(v))
	return d.name, d.args, d.kwargs, d.acl
}

func parseDefinition(v any) functionDef {
	d := functionDef{kwargs: ordered.New(), acl: ordered.New()}
	switch x := v.(type) {
	case *ordered.Map:
		d.kwargs = x.Copy()
	case []any:
		for _, item := range x {
			if m, ok := item.(*ordered.Map); ok {
				m.Range(func(k, v any) bool { d.kwargs.Set(k, v); return true })
				continue
			}
			d.args = append(d.args, item)
		}
	}
	if n, ok := d.kwargs.Get("mine_function"); ok {
		d.name = ordered.KeyString(n)
		d.kwargs.Delete("mine_function")
	}
	for _, k := range []string{"allow_tgt", "allow_tgt_type"} {
		if v, ok := d.kwargs.Get(k); ok {
			d.kwargs.Delete(k)
			if modules.Truthy(v) {
				d.acl.Set(k, v)
			}
		}
	}
	return d
}

// available is _mine_function_available.
func available(env *modules.Env, fun string) bool {
	if _, err := env.Registry.Lookup(env, fun); err != nil {
		env.Log.Error(fmt.Sprintf("Function %s in mine_functions not available", fun))
		return false
	}
	return true
}

// configured is config.merge("mine_functions", {}).
func configured(ctx context.Context, env *modules.Env) *ordered.Map {
	v, err := env.Run(ctx, "config.merge", []any{"mine_functions"}, ordered.FromPairs("default", ordered.New()))
	if err != nil {
		env.Log.Error("mine_functions not read", logattr.Err, err)
		return nil
	}
	m, _ := v.(*ordered.Map)
	return m
}

func update(ctx context.Context, c *modules.Call) (any, error) {
	env := c.Env
	var funs *ordered.Map
	arg := c.Arg("mine_functions")
	switch x := arg.(type) {
	case []any:
		funs = ordered.New()
		for _, f := range x {
			funs.Set(ordered.KeyString(f), ordered.New())
		}
	case *ordered.Map:
		funs = x
	}
	if !modules.Truthy(arg) {
		funs = configured(ctx, env)
	}
	if funs == nil || funs.Len() == 0 {
		// Nothing configured (or mine_functions of another type): Salt
		// bails out with None.
		return nil, nil
	}
	data := ordered.New()
	eachUsable(env, funs, func(alias, name string, _ any, d functionDef) {
		res, err := env.Run(ctx, name, d.args, d.kwargs)
		if err != nil {
			env.Log.Error(fmt.Sprintf("Function %s in mine.update failed to execute", name))
			env.Log.Debug("Error", logattr.Err, err)
			return
		}
		if d.acl.Has("allow_tgt") {
			data.Set(alias, minedata.WrapACL(res, d.acl))
		} else {
			data.Set(alias, res)
		}
	})
	return store(ctx, env, data, c.Bool("clear"))
}

func send(ctx context.Context, c *modules.Call) (any, error) {
	env := c.Env
	name := c.Str("name")
	kw := ordered.New()
	if c.Kwargs != nil {
		kw = c.Kwargs.Copy()
	}
	fun := name
	if v, ok := kw.Get("mine_function"); ok {
		fun = ordered.KeyString(v)
		kw.Delete("mine_function")
	}
	acl := ordered.New()
	for _, k := range []string{"allow_tgt", "allow_tgt_type"} {
		if v, ok := kw.Get(k); ok {
			kw.Delete(k)
			if modules.Truthy(v) {
				acl.Set(k, v)
			}
		}
	}
	res, err := env.Run(ctx, fun, c.VarArgs, kw)
	if err != nil {
		env.Log.Error(fmt.Sprintf("Function %s in mine.send failed to execute", fun))
		env.Log.Debug("Error", logattr.Err, err)
		return false, nil
	}
	data := ordered.New()
	if acl.Has("allow_tgt") {
		data.Set(name, minedata.WrapACL(res, acl))
	} else {
		data.Set(name, res)
	}
	return store(ctx, env, data, false)
}

func get(ctx context.Context, c *modules.Call) (any, error) {
	env := c.Env
	tgt, fun, tgtType := c.Arg("tgt"), c.Arg("fun"), c.Str("tgt_type")
	if local(env) {
		return localGet(ctx, env, tgt, fun, tgtType)
	}
	ch, err := env.Master()
	if err != nil {
		return nil, err
	}
	id := minionID(env)
	v, err := ch.MasterRequest(ctx, ordered.FromPairs("cmd", "_mine_get", "id", id, "tgt", tgt, "fun", fun, "tgt_type", tgtType))
	if err != nil {
		return nil, modules.Errorf("mine.get: %s", err.Error())
	}
	ret, ok := v.(*ordered.Map)
	if !ok {
		return v, nil
	}
	if c.Bool("exclude_minion") && ret.Has(id) {
		ret.Delete(id)
	}
	return ret, nil
}

// localGet is mine.get on a masterless minion: this minion's own mine
// when the target matches it.
func localGet(ctx context.Context, env *modules.Env, tgt, fun any, tgtType string) (any, error) {
	ret := ordered.New()
	kind, err := target.ParseKind(tgtType)
	if err != nil {
		return nil, modules.Invalidf("mine.get: %s", err.Error())
	}
	ok, err := target.Match(tgt, kind, &target.Minion{ID: minionID(env), Grains: env.Grains(), Pillar: env.Pillar}, target.Options{})
	if err != nil || !ok {
		return ret, nil
	}
	data, isMap := loadCache(env)
	if !isMap {
		return ret, nil
	}
	funs, multi, ok := minedata.Funcs(fun)
	if !ok {
		return ret, nil
	}
	id := minionID(env)
	for _, f := range funs {
		if v, ok := data.Get(f); ok {
			v, _ = minedata.Unwrap(v)
			minedata.Add(ret, multi, id, f, v)
		}
	}
	return ret, nil
}

func deleteFun(ctx context.Context, c *modules.Call) (any, error) {
	env := c.Env
	fun := c.Str("fun")
	if local(env) {
		data, ok := loadCache(env)
		if !ok {
			data = ordered.New()
		}
		data.Delete(fun)
		return saveCache(env, data)
	}
	return sendLoad(ctx, env, ordered.FromPairs("cmd", "_mine_delete", "fun", fun))
}

func flush(ctx context.Context, c *modules.Call) (any, error) {
	if local(c.Env) {
		return saveCache(c.Env, ordered.New())
	}
	return sendLoad(ctx, c.Env, ordered.FromPairs("cmd", "_mine_flush"))
}

// valid is mine.valid: each usable entry as {alias: {function: [args,
// {kwarg: value}, ...]}}, or the definition as written for an alias
// that is the function itself.
func valid(ctx context.Context, c *modules.Call) (any, error) {
	env := c.Env
	funs := configured(ctx, env)
	if funs == nil || funs.Len() == 0 {
		return nil, nil
	}
	out := ordered.New()
	eachUsable(env, funs, func(alias, _ string, v any, d functionDef) {
		if d.name == "" {
			out.Set(alias, v)
			return
		}
		args := append([]any{}, d.args...)
		d.kwargs.Range(func(k, v any) bool { args = append(args, ordered.FromPairs(k, v)); return true })
		out.Set(alias, ordered.FromPairs(d.name, args))
	})
	return out, nil
}

// eachUsable calls fn for each mine_functions entry, in order, whose
// function this minion has: its alias, the function's name (the alias
// when the definition names none), the definition as written and parsed.
func eachUsable(env *modules.Env, funs *ordered.Map, fn func(alias, name string, raw any, d functionDef)) {
	funs.Range(func(k, v any) bool {
		alias := ordered.KeyString(k)
		d := parseDefinition(ordered.DeepCopy(v))
		name := d.name
		if name == "" {
			name = alias
		}
		if available(env, name) {
			fn(alias, name, v, d)
		}
		return true
	})
}
