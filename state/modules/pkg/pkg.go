// Package pkg is Salt's `pkg` execution module: the virtual module that
// resolves to salt/modules/aptpkg.py on Debian and Ubuntu, yumpkg.py
// (dnf, dnf5, tdnf or yum) on the RedHat family and apkpkg.py on Alpine.
// The provider is chosen per call from the grains, as Salt's __virtual__
// chooses it at load time, and every provider runs the real tools with
// Salt's flags and environment through an injectable syscmd.Runner.
//
// Return shapes follow Salt: list_pkgs is {name: version} (versions joined
// by commas, or lists with versions_as_list), install/remove/upgrade
// return {name: {old, new}} from comparing list_pkgs before and after, and
// purge returns {removed: …, installed: …} on Debian.
//
// Holds are apt's only (pkg.hold, pkg.unhold, pkg.get_selections, and the
// unhold/hold around an install of a held package); yum's versionlock is
// not supported, nor are debconf, pkg_verify, resolve_capabilities,
// advisory ids and the repository-management functions.
package pkg

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/modules/pkg/syscmd"
)

// Module is the pkg module bound to how it reaches the host.
type Module struct {
	// Run runs the package tools.
	Run syscmd.Runner
	// Which finds a tool on PATH (yumpkg picks dnf5, dnf, tdnf or yum by
	// which one is installed).
	Which syscmd.LookPath
}

func init() { Register(modules.Default, &Module{Run: syscmd.Exec, Which: syscmd.Which}) }

// provider is one package manager behind the virtual pkg module.
type provider interface {
	// list reads the package database: installed packages, removed ones
	// whose configuration is left (Debian's rc state), and the ones marked
	// for purge that are still installed.
	list(ctx context.Context, j *job) (*lists, error)
	// installCmds builds the commands for install targets (already
	// rendered with target), downgrades and reinstalls.
	installCmds(j *job, in *installPlan) []syscmd.Cmd
	// removeCmd builds the command removing or purging targets.
	removeCmd(j *job, action string, targets []string) syscmd.Cmd
	refresh(ctx context.Context, j *job) (any, error)
	// candidates returns the version each name would install, "" when
	// there is none.
	candidates(ctx context.Context, j *job, names []string) (map[string]string, error)
	upgradeCmd(j *job) syscmd.Cmd
	// target renders name at version the way the tool takes it.
	target(name, version string) string
	cmp(a, b string) int
	// errText picks what a failed command reports.
	errText(r syscmd.Result) string
}

// lists is list_pkgs' three views of the package database.
type lists struct {
	installed, removed, purge map[string][]string
}

func newLists() *lists {
	return &lists{installed: map[string][]string{}, removed: map[string][]string{}, purge: map[string][]string{}}
}

// job is one call of a pkg function.
type job struct {
	m *Module
	c *modules.Call
	p provider
}

// providerFor chooses the package manager from the grains, as the
// __virtual__ functions of aptpkg, yumpkg and apkpkg do.
func (m *Module) providerFor(env *modules.Env) (provider, string) {
	family := grainStr(env, "os_family")
	switch family {
	case "Debian":
		return apt{}, ""
	case "RedHat":
		return &yum{bin: m.yumBin(env)}, ""
	case "Alpine":
		return apk{}, ""
	}
	return nil, fmt.Sprintf("The pkg module cannot be loaded: unsupported OS family %q", family)
}

// yumBin is yumpkg._yum: the first of dnf5, dnf, tdnf and yum on PATH;
// dnf when none is found and the release is new enough to have it.
func (m *Module) yumBin(env *modules.Env) string {
	for _, b := range []string{"dnf5", "dnf", "tdnf", "yum"} {
		if m.Which != nil && m.Which(b) != "" {
			return b
		}
	}
	if n, _ := strconv.Atoi(grainStr(env, "osmajorrelease")); n != 0 && n < 8 && grainStr(env, "os") != "Fedora" {
		return "yum"
	}
	return "dnf"
}

func grainStr(env *modules.Env, key string) string {
	if env == nil || env.Grains() == nil {
		return ""
	}
	v, ok := env.Grains().Get(key)
	if !ok || v == nil {
		return ""
	}
	return ordered.KeyString(v)
}

func (j *job) env() *modules.Env { return j.c.Env }

func (j *job) log() *slog.Logger {
	if j.c.Env != nil && j.c.Env.Log != nil {
		return j.c.Env.Log
	}
	return slog.New(slog.DiscardHandler)
}

// exec runs one command; a command that cannot start becomes Salt's
// CommandExecutionError.
func (j *job) exec(ctx context.Context, c syscmd.Cmd) (syscmd.Result, error) {
	r, err := j.m.Run(ctx, c)
	if err != nil {
		return r, modules.Errorf("run %s: %w", c.Args[0], err)
	}
	return r, nil
}

// scope prefixes a command that changes packages with `systemd-run
// --scope` on hosts booted with systemd 205 or later, unless the minion
// option systemd.scope is False (salt/utils/systemd.py has_scope).
func (j *job) scope(args ...string) []string {
	env := j.env()
	if grainStr(env, "init") != "systemd" {
		return args
	}
	if sd, ok := env.Grains().Value("systemd").(*ordered.Map); ok {
		if v, err := strconv.Atoi(ordered.KeyString(sd.Value("version"))); err != nil || v < 205 {
			return args
		}
	}
	if env.Opts != nil {
		if v, ok := env.Opts.Get("systemd.scope"); ok && !modules.Truthy(v) {
			return args
		}
	}
	return append([]string{"systemd-run", "--scope"}, args...)
}

// kw returns a **kwargs value of the call.
func (j *job) kw(name string) (any, bool) {
	if v, ok := j.c.Args[name]; ok {
		return v, true
	}
	return j.c.Kwargs.Get(name)
}

func (j *job) kwStr(name string) string {
	v, _ := j.kw(name)
	if v == nil {
		return ""
	}
	return ordered.KeyString(v)
}

func (j *job) kwBool(name string) bool {
	v, _ := j.kw(name)
	return isTrue(v)
}

// isTrue is salt.utils.data.is_true: True, non-zero numbers and the
// string "true" in any case.
func isTrue(v any) bool {
	switch x := v.(type) {
	case bool:
		return x
	case int:
		return x != 0
	case float64:
		return x != 0
	case string:
		return strings.EqualFold(x, "true") || (x != "" && x != "0" && isNum(x))
	}
	return false
}

func isNum(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}
