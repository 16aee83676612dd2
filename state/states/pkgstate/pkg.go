// Package pkgstate is Salt's `pkg` state module (salt/states/pkg.py):
// installed, latest, removed, purged, uptodate and mod_watch. Like Salt
// it works only through the execution functions (pkg.list_pkgs, pkg.install,
// pkg.latest_version, …) so it follows whichever provider the host's
// pkg module resolved to; tests bind those to a fake command runner.
//
// hold: True/False on pkg.installed holds or unholds the packages through
// pkg.hold and pkg.unhold (apt only).
//
// Not supported: pkg_verify, update_holds, capabilities
// (resolve_capabilities), the package-name suggestions of
// skip_suggestions=False (no provider has pkg.check_db), unpurging
// (lowpkg.unpurge) and the Windows, FreeBSD and Gentoo branches.
package pkgstate

import (
	"context"
	"path"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/modules/pkg"
	"github.com/brinesalt/brine/state/states"
)

func init() { Register(states.Default) }

func opt(name string, def any) modules.Param {
	return modules.Param{Name: name, Optional: true, Default: def}
}

var removeSpec = modules.Spec{Params: []modules.Param{{Name: "name"}, opt("version", nil), opt("pkgs", nil), opt("normalize", true),
	opt("ignore_epoch", nil)}, VarKw: true}

// specs are the signatures of the state functions, by function name.
var specs = map[string]modules.Spec{
	"installed": {Params: []modules.Param{{Name: "name"},
		opt("version", nil), opt("refresh", nil), opt("fromrepo", nil), opt("skip_verify", false), opt("skip_suggestions", false),
		opt("pkgs", nil), opt("sources", nil), opt("allow_updates", false), opt("pkg_verify", false), opt("normalize", true),
		opt("ignore_epoch", nil), opt("reinstall", false), opt("update_holds", false)}, VarKw: true},
	"latest": {Params: []modules.Param{{Name: "name"},
		opt("refresh", nil), opt("fromrepo", nil), opt("skip_verify", false), opt("pkgs", nil), opt("watch_flags", true)}, VarKw: true},
	"removed":  removeSpec,
	"purged":   removeSpec,
	"uptodate": {Params: []modules.Param{{Name: "name"}, opt("refresh", false), opt("pkgs", nil)}, VarKw: true},
}

// Register adds the pkg state functions to r.
func Register(r *states.Registry) {
	r.SetVirtual("pkg", func(env *modules.Env) (bool, string) {
		if env == nil || env.Registry == nil {
			return false, "The pkg state cannot be loaded: no pkg execution module"
		}
		if _, err := env.Registry.Lookup(env, "pkg.install"); err != nil {
			return false, "The pkg state cannot be loaded: " + err.Error()
		}
		return true, ""
	})
	r.Register(states.Function{Name: "pkg.installed", Spec: specs["installed"], Fn: Installed})
	r.Register(states.Function{Name: "pkg.latest", Spec: specs["latest"], Fn: Latest})
	r.Register(states.Function{Name: "pkg.removed", Spec: specs["removed"], Fn: uninstall("remove")})
	r.Register(states.Function{Name: "pkg.purged", Spec: specs["purged"], Fn: uninstall("purge")})
	r.Register(states.Function{Name: "pkg.uptodate", Spec: specs["uptodate"], Fn: Uptodate})
	r.RegisterAggregate("pkg", modAggregate)
	r.Register(states.Function{Name: "pkg.mod_watch", Spec: modules.Spec{Params: []modules.Param{{Name: "name"}}, VarKw: true}, Fn: modWatch})
}

// salt calls an execution function, Salt's __salt__[fun](*args, **kw).
func salt(ctx context.Context, c *states.Call, fun string, args []any, kw ...any) (any, error) {
	return c.Env.Run(ctx, fun, args, ordered.FromPairs(kw...))
}

// pkgLists is list_pkgs(versions_as_list=True) as a Go map.
func listPkgs(ctx context.Context, c *states.Call, kw ...any) (map[string][]string, error) {
	v, err := salt(ctx, c, "pkg.list_pkgs", nil, append([]any{"versions_as_list", true}, kw...)...)
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	if m, ok := v.(*ordered.Map); ok {
		m.Range(func(k, val any) bool {
			var vs []string
			switch x := val.(type) {
			case []any:
				for _, e := range x {
					vs = append(vs, ordered.KeyString(e))
				}
			default:
				vs = strings.Split(ordered.KeyString(x), ",")
			}
			out[ordered.KeyString(k)] = vs
			return true
		})
	}
	return out, nil
}

// errComment is what a pkg state reports for a failed execution call:
// strerror_without_changes when the error carries changes, else the
// prefix and the error.
func errComment(err error, prefix string) (string, *ordered.Map) {
	if ce, ok := pkg.AsChanges(err); ok {
		ch := ce.Changes
		if ch == nil {
			ch = ordered.New()
		}
		return ce.WithoutChanges(), ch
	}
	return prefix + err.Error(), ordered.New()
}

// cmpFunc compares two versions with the host's pkg.version_cmp.
func cmpFunc(ctx context.Context, c *states.Call) func(a, b string) int {
	return func(a, b string) int {
		v, err := salt(ctx, c, "pkg.version_cmp", []any{a, b})
		if n, ok := v.(int); ok && err == nil {
			return n
		}
		return strings.Compare(a, b)
	}
}

// fulfills is _fulfills_version_string: some installed version meets
// every comma-separated condition.
func fulfills(cmp func(a, b string) int, installed []string, conditions string, ignoreEpoch any, allowUpdates bool) bool {
	conds := parseConditions(conditions)
	for _, iv := range installed {
		all := true
		for _, cnd := range conds {
			oper := cnd[0]
			if allowUpdates && len(conds) == 1 && oper == "==" {
				oper = ">="
			}
			all = all && fulfillsSpec(cmp, iv, oper, cnd[1], ignoreEpoch)
		}
		if all {
			return true
		}
	}
	return false
}

func parseConditions(s string) [][2]string {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil
	}
	var out [][2]string
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		i := 0
		for i < len(part) && strings.ContainsRune("<>=!", rune(part[i])) {
			i++
		}
		oper, ver := part[:i], strings.TrimSpace(part[i:])
		if oper == "=" || oper == "" {
			oper = "=="
		}
		out = append(out, [2]string{oper, ver})
	}
	return out
}

// fulfillsSpec is _fulfills_version_spec for one installed version; the
// epoch is ignored for an exact match against a version without one
// (_check_ignore_epoch).
func fulfillsSpec(cmp func(a, b string) int, ver, oper, want string, ignoreEpoch any) bool {
	if oper == "==" {
		if ok, _ := path.Match(want, ver); ok {
			return true
		}
	}
	ignore := !strings.ContainsAny(oper, "<>") && !strings.Contains(want, ":")
	if b, ok := ignoreEpoch.(bool); ok {
		ignore = b
	}
	if ignore {
		ver, want = dropEpoch(ver), dropEpoch(want)
	}
	return pkg.Compare(cmp, ver, oper, want)
}

func dropEpoch(v string) string {
	if i := strings.IndexByte(v, ':'); i >= 0 {
		return v[i+1:]
	}
	return v
}

// desiredStr is _get_desired_pkg: "name=version", or name+version when
// the version starts with an operator.
func desiredStr(name, ver string) string {
	if ver == "" || strings.ContainsAny(ver[:1], "<>=") {
		return name + ver
	}
	return name + "=" + ver
}

func modWatch(ctx context.Context, c *states.Call) (*states.Result, error) {
	sfun := ordered.KeyString(c.Kwargs.Value("sfun"))
	fns := map[string]states.Func{"purged": uninstall("purge"), "latest": Latest, "removed": uninstall("remove"), "installed": Installed}
	fn, ok := fns[sfun]
	if !ok {
		return states.NewResult(c.Arg("name"), states.False, "pkg."+sfun+" does not work with the watch requisite"), nil
	}
	nc := *c
	nc.Args = map[string]any{"name": c.Arg("name")}
	nc.Kwargs = ordered.New()
	for _, p := range specs[sfun].Params {
		if v, ok := c.Kwargs.Get(p.Name); ok {
			nc.Args[p.Name] = v
		} else if p.Name != "name" {
			nc.Args[p.Name] = p.Default
		}
	}
	c.Kwargs.Range(func(k, v any) bool {
		if _, bound := nc.Args[ordered.KeyString(k)]; !bound && k != "sfun" {
			nc.Kwargs.Set(k, v)
		}
		return true
	})
	return fn(ctx, &nc)
}

// checkRefresh is salt.utils.pkg.check_refresh: an explicit refresh wins;
// unset, the database is refreshed once per run (see pkg.RefreshedKey).
func checkRefresh(c *states.Call, refresh any) bool {
	if refresh != nil {
		return isTrue(refresh)
	}
	if c.Env == nil || c.Env.Context == nil {
		return false
	}
	done, _ := c.Env.Context[pkg.RefreshedKey].(bool)
	return !done
}
