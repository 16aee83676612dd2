package jinja

import (
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
)

// saltProxy is the "salt" global (Salt's __salt__ loader dict).
// salt['cmd.run'], salt.cmd.run and salt['cmd']['run'] all name the
// function "cmd.run"; calling the proxy invokes Options.Salt.
type saltProxy struct{ name string }

func (s *saltProxy) attr(name string) any {
	if s.name == "" {
		return &saltProxy{name: name}
	}
	return &saltProxy{name: s.name + "." + name}
}

func (s *saltProxy) call(r *runner, args []any, kw *ordered.Map) (any, error) {
	if !strings.Contains(s.name, ".") {
		return nil, typeErr("'%s' object is not callable", typeName(s))
	}
	xargs := make([]any, len(args))
	for i, a := range args {
		if u, ok := a.(*undefined); ok && r.strictFor(u) {
			return nil, u.err()
		}
		xargs[i] = export(a)
	}
	xkw := ordered.New()
	var uerr error
	kw.Range(func(k, v any) bool {
		if u, ok := v.(*undefined); ok && r.strictFor(u) {
			uerr = u.err()
			return false
		}
		xkw.Set(k, export(v))
		return true
	})
	if uerr != nil {
		return nil, uerr
	}
	out, err := r.opts.Salt.Call(r.ctx, s.name, xargs, xkw)
	if err != nil {
		if r.ctx.Err() != nil {
			return nil, err
		}
		return nil, &tplError{kind: kindSalt, msg: err.Error(), err: err}
	}
	return normalize(out), nil
}

// lookup resolves salt[name] / salt.name. A full "mod.fun" name the
// caller does not know is missing, as LazyLoader raises KeyError.
func (s *saltProxy) lookup(r *runner, name string) (any, bool) {
	if s.name == "" && strings.Contains(name, ".") && !s.has(r, name) {
		return nil, false
	}
	return s.attr(name), true
}

// has reports whether fun is known, for "'mod.fun' in salt".
func (s *saltProxy) has(r *runner, fun string) bool {
	if s.name != "" {
		fun = s.name + "." + fun
	}
	if l, ok := r.opts.Salt.(SaltLister); ok {
		return l.Has(fun)
	}
	return true
}
