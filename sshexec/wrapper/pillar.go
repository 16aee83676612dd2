package wrapper

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/sshexec"
	"github.com/brinesalt/brine/state/apply"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/modules/grains"
	"github.com/brinesalt/brine/state/pillar"
)

// pillarFuncs are the functions of Salt's salt-ssh pillar wrapper
// (salt/client/ssh/wrapper/pillar.py), with its signatures: they answer
// on the controller from the host's compiled pillar. Other pillar.*
// functions (ls, ext, obfuscate, ...) are not in the wrapper, so Salt
// runs them on the host, and so does Brine.
var pillarFuncs = func() *modules.Registry {
	r := modules.NewRegistry()
	opt := func(name string, def any) modules.Param {
		return modules.Param{Name: name, Optional: true, Default: def}
	}
	raw := modules.Function{Name: "pillar.raw", Spec: modules.Spec{Params: []modules.Param{opt("key", nil)}}, Fn: pillarRaw}
	for _, f := range []modules.Function{
		{Name: "pillar.get", Spec: modules.Spec{Params: []modules.Param{{Name: "key"}, opt("default", ""),
			opt("merge", false), opt("delimiter", ":")}}, Fn: pillarGet},
		{Name: "pillar.item", Spec: modules.Spec{VarArgs: true}, Fn: pillarItem},
		raw,
		{Name: "pillar.keys", Spec: modules.Spec{Params: []modules.Param{{Name: "key"}, opt("delimiter", ":")}}, Fn: pillarKeys},
		{Name: "pillar.filter_by", Spec: modules.Spec{Params: []modules.Param{{Name: "lookup_dict"}, {Name: "pillar"},
			opt("merge", nil), opt("default", "default"), opt("base", nil)}}, Fn: pillarFilterBy},
	} {
		r.Register(f)
	}
	// items = raw; data = items, in the wrapper: pillar.items takes an
	// optional key, not the minion module's keys and pillar= override.
	for _, name := range []string{"pillar.items", "pillar.data"} {
		f := raw
		f.Name = name
		r.Register(f)
	}
	return r
}()

// IsPillar reports whether fun is a function of Salt's salt-ssh pillar
// wrapper, which salt-ssh answers on the controller.
func IsPillar(fun string) bool {
	_, err := pillarFuncs.Lookup(nil, fun)
	return err == nil
}

// PlanPillar returns the executor's planner for one call of a pillar
// wrapper function: it compiles the host's pillar on the controller, as
// its state runs do (same grains, roots, minion_opts and id), and answers
// from it, so the host receives nothing. Salt's run_wfunc
// (salt/client/ssh/__init__.py) compiles the same way and reports a bad
// call as a retcode 1 message.
func (s *States) PlanPillar(fun string, args []any, kwargs *ordered.Map) func(context.Context, *sshexec.Host) (*sshexec.Plan, error) {
	return func(ctx context.Context, h *sshexec.Host) (*sshexec.Plan, error) {
		grains, err := h.Grains(ctx)
		if err != nil {
			return nil, fmt.Errorf("learn the grains of %s: %w", h.Target.ID, err)
		}
		env := s.env(h, grains)
		if env.Pillar, err = apply.CompilePillar(ctx, env, nil); err != nil {
			return wfuncFailure(fun, err), nil
		}
		ret, err := runPillarFunc(ctx, env, fun, args, kwargs)
		if err != nil {
			return wfuncFailure(fun, err), nil
		}
		return &sshexec.Plan{Done: true, Return: ret}, nil
	}
}

func runPillarFunc(ctx context.Context, env *modules.Env, fun string, args []any, kwargs *ordered.Map) (any, error) {
	f, err := pillarFuncs.Lookup(env, fun)
	if err != nil {
		return nil, err
	}
	c, err := f.Bind(env, args, kwargs)
	if err != nil {
		return nil, err
	}
	return f.Fn(ctx, c)
}

// wfuncFailure is run_wfunc's answer to a wrapper function that raised:
// "TypeError encountered executing <fun>: <reason>" for arguments that do
// not fit, "An Exception occurred while executing <fun>: <exc>" else.
func wfuncFailure(fun string, err error) *sshexec.Plan {
	msg := fmt.Sprintf("An Exception occurred while executing %s: %s", fun, err.Error())
	var ae *modules.ArgError
	if errors.As(err, &ae) {
		reason := ae.Reason
		if fun == "pillar.items" || fun == "pillar.data" {
			// Python names the function object: items and data are raw.
			_, short, _ := strings.Cut(fun, ".")
			reason = strings.Replace(reason, short+"()", "raw()", 1)
		}
		msg = fmt.Sprintf("TypeError encountered executing %s: %s", fun, reason)
	}
	return &sshexec.Plan{Done: true, Return: msg, Retcode: 1}
}

func memPillar(c *modules.Call) *ordered.Map {
	if c.Env.Pillar == nil {
		return ordered.New()
	}
	return c.Env.Pillar
}

// pillarGet is the wrapper's get: a delimited key through mappings and
// lists, else default; with merge, a mapping found is merged over a
// mapping default (salt.utils.dictupdate.update, lists replaced), and a
// missing key gives the default itself.
func pillarGet(_ context.Context, c *modules.Call) (any, error) {
	key, delim := ordered.KeyString(c.Arg("key")), c.Str("delimiter")
	def := c.Arg("default")
	v, ok := grains.Traverse(memPillar(c), key, delim)
	if modules.Truthy(c.Arg("merge")) {
		found := any(ordered.New())
		if ok {
			found = v
		}
		fm, isMap := found.(*ordered.Map)
		if dm, defMap := def.(*ordered.Map); isMap && defMap {
			return pillar.Update(dm, fm, false), nil
		}
	}
	if !ok {
		return def, nil
	}
	return v, nil
}

// pillarItem is the wrapper's item: the top-level keys given, those
// missing left out (no default, no traversal, unlike the minion's).
func pillarItem(_ context.Context, c *modules.Call) (any, error) {
	p := memPillar(c)
	out := ordered.New()
	for _, a := range c.VarArgs {
		if v, ok := p.Get(a); ok {
			out.Set(a, v)
		}
	}
	return out, nil
}

// pillarRaw is the wrapper's raw (and items, data): the whole pillar, or
// with a key its top-level value, {} when absent.
func pillarRaw(_ context.Context, c *modules.Call) (any, error) {
	p := memPillar(c)
	if k := c.Arg("key"); modules.Truthy(k) {
		if v, ok := p.Get(k); ok {
			return v, nil
		}
		return ordered.New(), nil
	}
	return p, nil
}

// pillarKeys is the wrapper's keys: the keys of the mapping at a
// delimited key. Salt returns dict.keys(), which its own JSON encoding of
// the result then fails on; Brine returns them as a list.
func pillarKeys(_ context.Context, c *modules.Call) (any, error) {
	key := ordered.KeyString(c.Arg("key"))
	v, ok := grains.Traverse(memPillar(c), key, c.Str("delimiter"))
	if !ok {
		return nil, fmt.Errorf("'Pillar key not found: %s'", key) // str(KeyError(...))
	}
	m, isMap := v.(*ordered.Map)
	if !isMap {
		//lint:ignore ST1005 Salt's exact message
		return nil, fmt.Errorf("Pillar value in key %s is not a dict", key)
	}
	return m.Keys(), nil
}

// pillarFilterBy is the wrapper's filter_by: salt.utils.data.filter_by
// over the pillar.
func pillarFilterBy(_ context.Context, c *modules.Call) (any, error) {
	def, ok := c.Arg("default").(string)
	if !ok {
		def = ordered.KeyString(c.Arg("default"))
	}
	return grains.FilterBy(c.Arg("lookup_dict"), ordered.KeyString(c.Arg("pillar")), memPillar(c), c.Arg("merge"), def, c.Arg("base"))
}
