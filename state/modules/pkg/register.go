package pkg

import (
	"context"

	"github.com/brinesalt/brine/state/modules"
)

func opt(name string, def any) modules.Param {
	return modules.Param{Name: name, Optional: true, Default: def}
}

// Register adds the pkg functions to r, bound to m.
func Register(r *modules.Registry, m *Module) {
	r.SetVirtual("pkg", func(env *modules.Env) (bool, string) {
		p, reason := m.providerFor(env)
		return p != nil, reason
	})
	reg := func(name, doc string, spec modules.Spec, fn modules.Func) {
		r.Register(modules.Function{Name: "pkg." + name, Doc: doc, Spec: spec, Fn: fn})
	}
	reg("list_pkgs", "List the installed packages as {name: version}; versions_as_list=True gives lists.",
		modules.Spec{Params: []modules.Param{opt("versions_as_list", false), opt("removed", false), opt("purge_desired", false)}, VarKw: true}, m.listPkgs)
	reg("version", "Return the installed version of each named package, \"\" when not installed.",
		modules.Spec{VarArgs: true, VarKw: true}, m.version)
	latest := modules.Spec{VarArgs: true, VarKw: true}
	reg("latest_version", "Return the version that an install or upgrade would bring, \"\" when the package is current.", latest, m.latestVersion)
	reg("available_version", "Alias of pkg.latest_version.", latest, m.latestVersion)
	reg("refresh_db", "Refresh the package database from the repositories.",
		modules.Spec{Params: []modules.Param{opt("cache_valid_time", 0), opt("failhard", false)}, VarKw: true}, m.refreshDB)
	reg("install", "Install packages (name, pkgs or sources) and return {name: {old, new}}.",
		modules.Spec{Params: []modules.Param{opt("name", nil), opt("refresh", false), opt("fromrepo", nil), opt("skip_verify", false),
			opt("debconf", nil), opt("pkgs", nil), opt("sources", nil), opt("reinstall", false), opt("downloadonly", false),
			opt("ignore_epoch", false)}, VarKw: true}, m.install)
	rm := modules.Spec{Params: []modules.Param{opt("name", nil), opt("pkgs", nil)}, VarKw: true}
	reg("remove", "Remove packages and return {name: {old, new}}.", rm, m.uninstall("remove"))
	reg("purge", "Remove packages with their configuration files.", rm, m.uninstall("purge"))
	reg("upgrade", "Upgrade all packages and return {name: {old, new}}.",
		modules.Spec{Params: []modules.Param{opt("refresh", true), opt("dist_upgrade", false)}, VarKw: true}, m.upgrade)
	reg("list_upgrades", "List the packages an upgrade would change: {name: new version}.",
		modules.Spec{Params: []modules.Param{opt("refresh", true), opt("dist_upgrade", true)}, VarKw: true}, m.listUpgrades)
	reg("upgrade_available", "Report whether an upgrade is available for the named package.",
		modules.Spec{Params: []modules.Param{{Name: "name"}}, VarKw: true}, m.upgradeAvailable)
	reg("version_cmp", "Compare two versions: -1, 0 or 1.",
		modules.Spec{Params: []modules.Param{{Name: "pkg1"}, {Name: "pkg2"}, opt("ignore_epoch", false)}, VarKw: true}, m.versionCmp)
	reg("info_installed", "Return the dpkg information of installed packages (apt only).",
		modules.Spec{VarArgs: true, VarKw: true}, m.infoInstalled)
	holdSpec := modules.Spec{Params: []modules.Param{opt("name", nil), opt("pkgs", nil), opt("sources", nil)}, VarKw: true}
	reg("hold", "Put packages on hold (apt: dpkg --set-selections).", holdSpec, m.hold(true))
	reg("unhold", "Take packages off hold.", holdSpec, m.hold(false))
	reg("get_selections", "Return dpkg's selection states: {state: [packages]}.",
		modules.Spec{Params: []modules.Param{opt("pattern", nil), opt("state", nil)}}, m.getSelections)
	reg("normalize_name", "Strip the host's own architecture from a package name.",
		modules.Spec{Params: []modules.Param{{Name: "name"}}}, func(_ context.Context, c *modules.Call) (any, error) {
			j, err := m.newJob(c)
			if err != nil {
				return nil, err
			}
			return j.normalize(c.Str("name")), nil
		})
}

func (m *Module) upgradeAvailable(ctx context.Context, c *modules.Call) (any, error) {
	nc := *c
	nc.VarArgs = []any{c.Str("name")}
	nc.Kwargs = c.Kwargs.Copy()
	v, err := m.latestVersion(ctx, &nc)
	if err != nil {
		return nil, err
	}
	s, _ := v.(string)
	return s != "", nil
}

func (m *Module) versionCmp(_ context.Context, c *modules.Call) (any, error) {
	j, err := m.newJob(c)
	if err != nil {
		return nil, err
	}
	a, b := c.Str("pkg1"), c.Str("pkg2")
	if isTrue(c.Arg("ignore_epoch")) {
		a, b = dropEpoch(a), dropEpoch(b)
	}
	return j.p.cmp(a, b), nil
}

func dropEpoch(v string) string {
	for i := 0; i < len(v); i++ {
		if v[i] == ':' {
			return v[i+1:]
		}
		if !isDigit(v[i]) {
			break
		}
	}
	return v
}
