package pkgstate

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/modules/pkg"
	"github.com/brinesalt/brine/state/states"
)

// uninstall is pkg.removed and pkg.purged (states/pkg.py _uninstall).
func uninstall(action string) states.Func {
	return func(ctx context.Context, c *states.Call) (*states.Result, error) {
		name := c.Arg("name")
		params, res := removeParams(c)
		if res != nil {
			return res, nil
		}
		targets, res, err := findRemoveTargets(ctx, c, params)
		if err != nil {
			return errResult(name, action, err), nil
		}
		if res != nil {
			if action != "purge" {
				return res, nil
			}
			targets = nil
		}
		if action == "purge" {
			removed, err := listPkgs(ctx, c, "removed", true)
			if err != nil {
				return errResult(name, action, err), nil
			}
			for _, p := range params {
				if len(removed[p.name]) > 0 && !contains(targets, p.name) {
					targets = append(targets, p.name)
				}
			}
		}
		sort.Strings(targets)
		if len(targets) == 0 {
			suffix := ""
			if action == "purge" {
				suffix = " or partially installed"
			}
			return states.NewResult(name, states.True, "None of the targeted packages are installed"+suffix), nil
		}
		if c.Env.Test {
			r := states.NewResult(name, states.None, fmt.Sprintf("The following packages will be %sd: %s.", action, strings.Join(targets, ", ")))
			for _, t := range targets {
				r.Changes.Set(t, ordered.FromPairs("new", action+"d", "old", ""))
			}
			return r, nil
		}
		return runUninstall(ctx, c, action, params, targets)
	}
}

func errResult(name any, action string, err error) *states.Result {
	verb := map[string]string{"remove": "removing", "purge": "purging"}[action]
	comment, ch := errComment(err, fmt.Sprintf("An error was encountered while %s package(s): ", verb))
	r := states.NewResult(name, states.False, comment)
	r.Changes = ch
	return r
}

// removeParams is pkg_resource.parse_targets for removal: pkgs, else the
// comma-separated name with the version argument.
func removeParams(c *states.Call) ([]want, *states.Result) {
	if pkgs := c.Arg("pkgs"); modules.Truthy(pkgs) {
		ts, ok := pkg.Repack(pkgs, nil)
		if !ok {
			return nil, states.NewResult(c.Arg("name"), states.False, "Invalidly formatted pkgs parameter. See minion log.")
		}
		out := make([]want, len(ts))
		for i, t := range ts {
			out[i] = want{t.Name, t.Version}
		}
		return out, nil
	}
	ver := ""
	if v := c.Arg("version"); v != nil {
		ver = ordered.KeyString(v)
	}
	var out []want
	for _, n := range strings.Split(c.Str("name"), ",") {
		out = append(out, want{n, ver})
	}
	return out, nil
}

// findRemoveTargets is _find_remove_targets.
func findRemoveTargets(ctx context.Context, c *states.Call, params []want) ([]string, *states.Result, error) {
	cur, err := listPkgs(ctx, c)
	if err != nil {
		return nil, nil, err
	}
	cmp := cmpFunc(ctx, c)
	var targets []string
	versionSpec := false
	for _, p := range params {
		cver := cur[p.name]
		switch {
		case len(cver) == 0:
		case p.version == "":
			targets = append(targets, p.name)
		default:
			versionSpec = true
			if fulfills(cmp, cver, p.version, c.Arg("ignore_epoch"), false) {
				targets = append(targets, p.name)
			}
		}
	}
	if len(targets) == 0 {
		msg := "All specified packages are already absent"
		if versionSpec {
			msg = "All specified packages (matching specified versions) are already absent"
		}
		return nil, states.NewResult(c.Arg("name"), states.True, msg), nil
	}
	return targets, nil, nil
}

func runUninstall(ctx context.Context, c *states.Call, action string, params []want, targets []string) (*states.Result, error) {
	name := c.Arg("name")
	kw := []any{"pkgs", c.Arg("pkgs"), "version", c.Arg("version")}
	c.Kwargs.Range(func(k, v any) bool { kw = append(kw, k, v); return true })
	ret, err := salt(ctx, c, "pkg."+action, []any{c.Arg("name")}, kw...)
	if err != nil {
		return errResult(name, action, err), nil
	}
	changes, _ := ret.(*ordered.Map)
	if changes == nil {
		changes = ordered.New()
	}
	now, err := listPkgs(ctx, c)
	if err != nil {
		return errResult(name, action, err), nil
	}
	redhat := contains([]string{"Suse", "RedHat", "Windows"}, ordered.KeyString(c.Env.Grains().Value("os_family")))
	var failed []string
	for _, p := range params {
		switch {
		case redhat && len(now[p.name]) > 0 && p.version == "":
			failed = append(failed, p.name)
		case redhat && len(now[p.name]) > 0 && contains(now[p.name], p.version):
			failed = append(failed, p.name+"-"+p.version)
		case !redhat && len(now[p.name]) > 0:
			failed = append(failed, p.name)
		}
	}
	if action == "purge" {
		removed, err := listPkgs(ctx, c, "removed", true)
		if err != nil {
			return errResult(name, action, err), nil
		}
		for _, p := range params {
			if len(removed[p.name]) > 0 {
				failed = append(failed, p.name)
			}
		}
	}
	sort.Strings(failed)
	if len(failed) > 0 {
		r := states.NewResult(name, states.False, fmt.Sprintf("The following packages failed to %s: %s.", action, strings.Join(failed, ", ")))
		r.Changes = changes
		return r, nil
	}
	var notInstalled []string
	for _, p := range params {
		if !contains(targets, p.name) {
			notInstalled = append(notInstalled, p.name)
		}
	}
	sort.Strings(notInstalled)
	comment := fmt.Sprintf("All targeted packages were %sd.", action)
	if len(notInstalled) > 0 {
		comment = fmt.Sprintf("The following packages were not installed: %s The following packages were %sd: %s.",
			strings.Join(notInstalled, ", "), action, strings.Join(targets, ", "))
	}
	r := states.NewResult(name, states.True, comment)
	r.Changes = changes
	return r, nil
}
