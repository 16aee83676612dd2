package pkg

import (
	"context"
	"fmt"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/modules/pkg/syscmd"
)

// selections is aptpkg.get_selections: dpkg --get-selections PATTERN,
// package names by selection state (install, hold, deinstall, purge).
func (j *job) selections(ctx context.Context, pattern string) (map[string][]string, error) {
	if pattern == "" {
		pattern = "*"
	}
	r, err := j.exec(ctx, syscmd.Cmd{Args: []string{"dpkg", "--get-selections", pattern}})
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, line := range strings.Split(r.Stdout, "\n") {
		if f := strings.Fields(line); len(f) == 2 {
			out[f[1]] = append(out[f[1]], f[0])
		}
	}
	return out, nil
}

// setSelection is one dpkg --set-selections call, fed "PKG STATE" on
// stdin as set_selections does.
func (j *job) setSelection(ctx context.Context, pkg, state string) (bool, error) {
	r, err := j.exec(ctx, syscmd.Cmd{Args: []string{"dpkg", "--set-selections"}, Stdin: pkg + " " + state})
	if err != nil {
		return false, err
	}
	if r.Retcode != 0 {
		j.log().Error(fmt.Sprintf("failed to set state %s for package %s", state, pkg))
		return false, nil
	}
	return true, nil
}

// heldAmong returns the targeted packages that are on hold, which
// aptpkg.install unholds for the install and holds again after.
func (j *job) heldAmong(ctx context.Context, plan *installPlan) ([]string, error) {
	if _, ok := j.p.(apt); !ok {
		return nil, nil
	}
	sel, err := j.selections(ctx, "")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, t := range append(append([]string(nil), plan.targets...), plan.reinstall...) {
		name, _, _ := strings.Cut(t, "=")
		if contains(sel["hold"], name) {
			out = append(out, name)
		}
	}
	return out, nil
}

// hold and unhold are aptpkg.hold and aptpkg.unhold: one
// {name, changes, result, comment} mapping per target.
func (m *Module) hold(on bool) modules.Func {
	return func(ctx context.Context, c *modules.Call) (any, error) {
		j, err := m.newJob(c)
		if err != nil {
			return nil, err
		}
		if _, ok := j.p.(apt); !ok {
			return nil, modules.Errorf("pkg.hold and pkg.unhold are only implemented for apt")
		}
		targets, err := holdTargets(c)
		if err != nil {
			return nil, err
		}
		ret := ordered.New()
		for _, t := range targets {
			res, err := j.holdOne(ctx, t, on)
			if err != nil {
				return nil, err
			}
			ret.Set(t, res)
		}
		return ret, nil
	}
}

func holdTargets(c *modules.Call) ([]string, error) {
	name, pkgs, sources := c.Arg("name"), c.Arg("pkgs"), c.Arg("sources")
	if !modules.Truthy(name) && !modules.Truthy(pkgs) && !modules.Truthy(sources) {
		return nil, modules.Invalidf("One of name, pkgs, or sources must be specified.")
	}
	if modules.Truthy(pkgs) && modules.Truthy(sources) {
		return nil, modules.Invalidf("Only one of pkgs or sources can be specified.")
	}
	var list []any
	switch {
	case modules.Truthy(pkgs):
		list, _ = pkgs.([]any)
	case modules.Truthy(sources):
		list, _ = sources.([]any)
	default:
		return []string{c.Str("name")}, nil
	}
	var out []string
	for _, x := range list {
		if m, ok := x.(*ordered.Map); ok && m.Len() > 0 {
			out = append(out, ordered.KeyString(m.Keys()[0]))
		} else {
			out = append(out, ordered.KeyString(x))
		}
	}
	return out, nil
}

func (j *job) holdOne(ctx context.Context, target string, on bool) (*ordered.Map, error) {
	res := ordered.FromPairs("name", target, "changes", ordered.New(), "result", false, "comment", "")
	sel, err := j.selections(ctx, target)
	if err != nil {
		return nil, err
	}
	held := len(sel["hold"]) > 0
	want, verb := "hold", "held"
	if !on {
		want = "install"
	}
	switch {
	case len(sel) == 0 && on:
		res.Set("comment", fmt.Sprintf("Package %s not currently held.", target))
	case len(sel) == 0:
		res.Set("comment", fmt.Sprintf("Package %s does not have a state.", target))
	case held == on:
		res.Set("result", true)
		if on {
			res.Set("comment", fmt.Sprintf("Package %s is already set to be %s.", target, verb))
		} else {
			res.Set("comment", fmt.Sprintf("Package %s is already set not to be %s.", target, verb))
		}
	case j.c.Env != nil && j.c.Env.Test:
		res.Set("result", nil)
		if on {
			res.Set("comment", fmt.Sprintf("Package %s is set to be held.", target))
		} else {
			res.Set("comment", fmt.Sprintf("Package %s is set not to be held.", target))
		}
	default:
		old := ""
		for state, pkgs := range sel {
			if contains(pkgs, target) {
				old = state
			}
		}
		ok, err := j.setSelection(ctx, target, want)
		if err != nil {
			return nil, err
		}
		if ok {
			res.Set("changes", ordered.FromPairs("old", old, "new", want))
		}
		res.Set("result", true)
		if on {
			res.Set("comment", fmt.Sprintf("Package %s is now being held.", target))
		} else {
			res.Set("comment", fmt.Sprintf("Package %s is no longer being held.", target))
		}
	}
	return res, nil
}

func (m *Module) getSelections(ctx context.Context, c *modules.Call) (any, error) {
	j, err := m.newJob(c)
	if err != nil {
		return nil, err
	}
	sel, err := j.selections(ctx, c.Str("pattern"))
	if err != nil {
		return nil, err
	}
	toMap := func(states ...string) *ordered.Map {
		out := ordered.New()
		for _, s := range states {
			l := []any{}
			for _, p := range sel[s] {
				l = append(l, p)
			}
			out.Set(s, l)
		}
		return out
	}
	if st := c.Str("state"); st != "" {
		return toMap(st), nil
	}
	return toMap(sortedKeys(sel)...), nil
}
