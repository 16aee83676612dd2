package modules

import (
	"context"

	"github.com/brinesalt/brine/internal/ordered"
)

// SaltFuncs is Salt's __salt__ as templates see it: salt['mod.fun'](...)
// runs the function with Env, and 'mod.fun' in salt asks Env's registry.
// It is a jinja.SaltCaller and jinja.SaltLister.
type SaltFuncs struct{ Env *Env }

// Call runs fun with args and kw in Env.
func (s SaltFuncs) Call(ctx context.Context, fun string, args []any, kw *ordered.Map) (any, error) {
	return s.Env.Run(ctx, fun, args, kw)
}

// Has reports whether fun is available in Env.
func (s SaltFuncs) Has(fun string) bool {
	if s.Env.Registry == nil {
		return false
	}
	_, err := s.Env.Registry.Lookup(s.Env, fun)
	return err == nil
}
