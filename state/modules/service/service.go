// Package service is Salt's `service` execution module: the virtual
// module that resolves to salt/modules/systemd_service.py when the host
// runs systemd (grains init: systemd) and otherwise to System V init
// scripts: salt/modules/debian_service.py (service + update-rc.d),
// rh_service.py (service + chkconfig), or plain /etc/init.d scripts and
// /etc/rcN.d links when neither tool is installed.
//
// The tools run through an injectable syscmd.Runner and the init-script
// directories are read under Module.Root, so tests state the host's facts
// and assert the commands.
//
// Not supported: masking, systemd's daemon-reload detection before a
// start (_check_for_unit_changes), sig= process matching for status
// (the signature is looked up with pgrep -f instead of ps), upstart and
// OpenRC.
package service

import (
	"context"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/modules/pkg/syscmd"
)

// Module is the service module bound to how it reaches the host.
type Module struct {
	Run   syscmd.Runner
	Which syscmd.LookPath
	// Root is the directory that /etc/init.d, /etc/rcN.d and the systemd
	// unit directories are read under; "" means /.
	Root string
}

func init() { Register(modules.Default, &Module{Run: syscmd.Exec, Which: syscmd.Which}) }

// provider is one init system behind the virtual module.
type provider interface {
	action(ctx context.Context, j *job, name, verb string) (any, error)
	status(ctx context.Context, j *job, name string) (bool, error)
	enable(ctx context.Context, j *job, name string) (bool, error)
	disable(ctx context.Context, j *job, name string) (bool, error)
	enabled(ctx context.Context, j *job, name string) (bool, error)
	all(ctx context.Context, j *job) ([]string, error)
	available(ctx context.Context, j *job, name string) (bool, error)
}

type job struct {
	m *Module
	c *modules.Call
	p provider
}

// providerFor chooses systemd when the init grain says so, else SysV.
func (m *Module) providerFor(env *modules.Env) provider {
	if grainStr(env, "init") == "systemd" {
		return systemd{}
	}
	return sysv{}
}

func grainStr(env *modules.Env, key string) string {
	if env == nil || env.Grains() == nil {
		return ""
	}
	v := env.Grains().Value(key)
	if v == nil {
		return ""
	}
	return ordered.KeyString(v)
}

func (j *job) exec(ctx context.Context, args ...string) (syscmd.Result, error) {
	r, err := j.m.Run(ctx, syscmd.Cmd{Args: args})
	if err != nil {
		return r, modules.Errorf("run %s: %w", args[0], err)
	}
	return r, nil
}

func (j *job) path(p string) string {
	if j.m.Root == "" {
		return p
	}
	return path.Join(j.m.Root, p)
}

func (j *job) which(name string) string {
	if j.m.Which == nil {
		return ""
	}
	return j.m.Which(name)
}

func opt(name string, def any) modules.Param {
	return modules.Param{Name: name, Optional: true, Default: def}
}

var nameOnly = modules.Spec{Params: []modules.Param{{Name: "name"}}, VarKw: true}

// Register adds the service functions to r, bound to m.
func Register(r *modules.Registry, m *Module) {
	reg := func(name, doc string, spec modules.Spec, fn func(ctx context.Context, j *job) (any, error)) {
		r.Register(modules.Function{Name: "service." + name, Doc: doc, Spec: spec, Fn: func(ctx context.Context, c *modules.Call) (any, error) {
			return fn(ctx, &job{m: m, c: c, p: m.providerFor(c.Env)})
		}})
	}
	for _, verb := range []string{"start", "stop", "restart", "reload", "force_reload"} {
		v := verb
		reg(v, "Run the service's "+strings.ReplaceAll(v, "_", "-")+" action.", nameOnly, func(ctx context.Context, j *job) (any, error) {
			return j.p.action(ctx, j, j.c.Str("name"), strings.ReplaceAll(v, "_", "-"))
		})
	}
	reg("status", "Return whether the service is running; a glob name gives {name: bool}.",
		modules.Spec{Params: []modules.Param{{Name: "name"}, opt("sig", nil)}, VarKw: true}, status)
	reg("enable", "Enable the service at boot.", nameOnly, func(ctx context.Context, j *job) (any, error) {
		return j.p.enable(ctx, j, j.c.Str("name"))
	})
	reg("disable", "Disable the service at boot.", nameOnly, func(ctx context.Context, j *job) (any, error) {
		return j.p.disable(ctx, j, j.c.Str("name"))
	})
	reg("enabled", "Return whether the service starts at boot.", nameOnly, func(ctx context.Context, j *job) (any, error) {
		return j.p.enabled(ctx, j, j.c.Str("name"))
	})
	reg("disabled", "Return whether the service is installed but does not start at boot.", nameOnly, disabled)
	reg("get_all", "List every service the init system knows.", modules.Spec{VarKw: true}, func(ctx context.Context, j *job) (any, error) {
		names, err := j.p.all(ctx, j)
		return strList(names), err
	})
	reg("get_enabled", "List the services enabled at boot.", modules.Spec{VarKw: true}, func(ctx context.Context, j *job) (any, error) {
		return filterAll(ctx, j, true)
	})
	reg("get_disabled", "List the services installed but disabled at boot.", modules.Spec{VarKw: true}, func(ctx context.Context, j *job) (any, error) {
		return filterAll(ctx, j, false)
	})
	reg("available", "Return whether the service exists.", nameOnly, func(ctx context.Context, j *job) (any, error) {
		return j.p.available(ctx, j, j.c.Str("name"))
	})
	reg("missing", "The inverse of service.available.", nameOnly, func(ctx context.Context, j *job) (any, error) {
		ok, err := j.p.available(ctx, j, j.c.Str("name"))
		return !ok, err
	})
}

var globRe = regexp.MustCompile(`\*|\?|\[.+\]`)

// status is service.status: a signature is looked for among the running
// processes; a glob name reports every matching service.
func status(ctx context.Context, j *job) (any, error) {
	name := j.c.Str("name")
	if sig := j.c.Str("sig"); sig != "" {
		r, err := j.exec(ctx, "pgrep", "-f", sig)
		if err != nil {
			return nil, err
		}
		return r.Retcode == 0 && strings.TrimSpace(r.Stdout) != "", nil
	}
	if !globRe.MatchString(name) {
		return j.p.status(ctx, j, name)
	}
	all, err := j.p.all(ctx, j)
	if err != nil {
		return nil, err
	}
	out := ordered.New()
	for _, s := range all {
		if ok, _ := path.Match(name, s); ok {
			up, err := j.p.status(ctx, j, s)
			if err != nil {
				return nil, err
			}
			out.Set(s, up)
		}
	}
	return out, nil
}

// disabled is service.disabled: available and not enabled.
func disabled(ctx context.Context, j *job) (any, error) {
	name := j.c.Str("name")
	if sd, ok := j.p.(systemd); ok {
		on, err := sd.enabled(ctx, j, name)
		return !on, err
	}
	all, err := j.p.all(ctx, j)
	if err != nil {
		return nil, err
	}
	if !contains(all, name) {
		return false, nil
	}
	on, err := j.p.enabled(ctx, j, name)
	return !on, err
}

func filterAll(ctx context.Context, j *job, want bool) (any, error) {
	all, err := j.p.all(ctx, j)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, s := range all {
		on, err := j.p.enabled(ctx, j, s)
		if err != nil {
			return nil, err
		}
		if on == want {
			out = append(out, s)
		}
	}
	return strList(out), nil
}

func strList(l []string) []any {
	sort.Strings(l)
	out := make([]any, len(l))
	for i, s := range l {
		out[i] = s
	}
	return out
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
