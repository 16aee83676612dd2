package pkgstate

import (
	"context"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/states"
)

// Uptodate is pkg.uptodate: upgrade every package (or, with pkgs, check
// those) when pkg.list_upgrades finds something to do.
func Uptodate(ctx context.Context, c *states.Call) (*states.Result, error) {
	name := c.Arg("name")
	r := states.NewResult(name, states.False, "Failed to update")
	if _, err := c.Env.Registry.Lookup(c.Env, "pkg.list_upgrades"); err != nil {
		r.Comment = "State pkg.uptodate is not available"
		return r, nil
	}
	refresh, ok := c.Arg("refresh").(bool)
	if !ok {
		r.Comment = "refresh must be either True or False"
		return r, nil
	}
	kw := []any{"refresh", refresh}
	c.Kwargs.Range(func(k, v any) bool { kw = append(kw, k, v); return true })
	v, err := salt(ctx, c, "pkg.list_upgrades", nil, kw...)
	if err != nil {
		r.Comment = err.Error()
		return r, nil
	}
	upgrades, _ := v.(*ordered.Map)
	pkgs, only := c.Arg("pkgs").([]any)
	expected := ordered.New()
	var wanted []string
	for _, k := range upgrades.StringKeys() {
		if only && !containsAny(pkgs, k) {
			continue
		}
		wanted = append(wanted, k)
		cur, err := salt(ctx, c, "pkg.version", []any{k})
		if err != nil {
			r.Comment = err.Error()
			return r, nil
		}
		expected.Set(k, ordered.FromPairs("new", upgrades.Value(k), "old", cur))
	}
	if len(wanted) == 0 {
		r.Result, r.Comment = states.True, "System is already up-to-date"
		return r, nil
	}
	if c.Env.Test {
		r.Result, r.Comment, r.Changes = states.None, "System update will be performed", expected
		return r, nil
	}
	ret, err := salt(ctx, c, "pkg.upgrade", nil, append([]any{"pkgs", c.Arg("pkgs")}, kw...)...)
	if err != nil {
		r.Comment, r.Changes = errComment(err, "An error was encountered while updating packages: ")
		return r, nil
	}
	changes, _ := ret.(*ordered.Map)
	if changes == nil {
		changes = ordered.New()
	}
	r.Changes = changes
	var missing []string
	if only {
		for _, k := range wanted {
			if !changes.Has(k) {
				missing = append(missing, k)
			}
		}
	}
	if len(missing) > 0 {
		r.Comment = "The following package(s) failed to update: " + strings.Join(missing, ", ")
		return r, nil
	}
	r.Result, r.Comment = states.True, "Upgrade ran successfully"
	return r, nil
}

func containsAny(l []any, s string) bool {
	for _, x := range l {
		if ordered.KeyString(x) == s {
			return true
		}
	}
	return false
}
