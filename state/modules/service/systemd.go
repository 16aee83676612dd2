package service

import (
	"context"
	"os"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
)

// systemd is salt/modules/systemd_service.py.
type systemd struct{}

var unitTypes = []string{"service", "socket", "device", "mount", "automount", "swap", "target", "path", "timer"}

// unit is _canonical_unit_name: a name without a unit suffix is a service.
func unit(name string) string {
	for _, t := range unitTypes {
		if strings.HasSuffix(name, "."+t) {
			return name
		}
	}
	return name + ".service"
}

// systemctl is _systemctl_cmd: systemctl found on PATH, prefixed with
// systemd-run --scope for actions that change a unit when systemd is
// new enough and the systemd.scope option is not False.
func (systemd) systemctl(j *job, scope bool, verb, name string) []string {
	var cmd []string
	if scope && hasScope(j.c.Env) {
		cmd = append(cmd, orName(j.which("systemd-run"), "systemd-run"), "--scope")
	}
	cmd = append(cmd, orName(j.which("systemctl"), "systemctl"))
	if nb, _ := j.c.Kwargs.Get("no_block"); modules.Truthy(nb) {
		cmd = append(cmd, "--no-block")
	}
	cmd = append(cmd, strings.Fields(verb)...)
	if name != "" {
		cmd = append(cmd, unit(name))
	}
	if verb == "status" {
		cmd = append(cmd, "-n", "0")
	}
	return cmd
}

func orName(p, name string) string {
	if p == "" {
		return name
	}
	return p
}

// hasScope is salt.utils.systemd.has_scope plus the systemd.scope option.
func hasScope(env *modules.Env) bool {
	if env == nil || env.Grains() == nil {
		return false
	}
	sd, ok := env.Grains().Value("systemd").(*ordered.Map)
	if !ok || atoi(ordered.KeyString(sd.Value("version"))) < 205 {
		return false
	}
	if env.Opts != nil {
		if v, ok := env.Opts.Get("systemd.scope"); ok && !modules.Truthy(v) {
			return false
		}
	}
	return true
}

// stripScope drops systemd-run's "Running scope as unit …scope" lines.
func stripScope(msg string) string {
	var out []string
	for _, l := range strings.Split(msg, "\n") {
		if !strings.HasSuffix(l, ".scope") {
			out = append(out, l)
		}
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

// action runs start, stop, restart, reload or force-reload. Every verb
// but stop raises the tool's error, as systemd_service does so that the
// state can show why a unit would not start.
func (s systemd) action(ctx context.Context, j *job, name, verb string) (any, error) {
	r, err := j.exec(ctx, s.systemctl(j, true, verb, name)...)
	if err != nil {
		return nil, err
	}
	if verb == "stop" {
		return r.Retcode == 0, nil
	}
	if r.Retcode != 0 {
		return nil, modules.Errorf("%s", stripScope(r.Stderr))
	}
	return true, nil
}

func (s systemd) status(ctx context.Context, j *job, name string) (bool, error) {
	r, err := j.exec(ctx, s.systemctl(j, false, "is-active", name)...)
	return err == nil && r.Retcode == 0, err
}

func (s systemd) enable(ctx context.Context, j *job, name string) (bool, error) {
	r, err := j.exec(ctx, s.systemctl(j, true, "enable", name)...)
	if err != nil {
		return false, err
	}
	if r.Retcode != 0 {
		return false, modules.Errorf("%s", stripScope(r.Stderr))
	}
	return true, nil
}

func (s systemd) disable(ctx context.Context, j *job, name string) (bool, error) {
	r, err := j.exec(ctx, s.systemctl(j, true, "disable", name)...)
	return err == nil && r.Retcode == 0, err
}

func (s systemd) enabled(ctx context.Context, j *job, name string) (bool, error) {
	r, err := j.exec(ctx, s.systemctl(j, false, "is-enabled", name)...)
	return err == nil && r.Retcode == 0, err
}

// all is get_all: unit files in the system and local unit directories
// (services without their suffix) plus executable init scripts.
func (systemd) all(_ context.Context, j *job) ([]string, error) {
	seen := map[string]bool{}
	for _, dir := range []string{"/lib/systemd/system", "/usr/lib/systemd/system", "/etc/systemd/system"} {
		ents, err := os.ReadDir(j.path(dir))
		if err != nil {
			continue
		}
		for _, e := range ents {
			base, typ, ok := cutLast(e.Name(), ".")
			if !ok || !contains(unitTypes, typ) {
				continue
			}
			if typ == "service" {
				seen[base] = true
			} else {
				seen[e.Name()] = true
			}
		}
	}
	for _, s := range initScripts(j) {
		seen[s] = true
	}
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	return out, nil
}

func cutLast(s, sep string) (string, string, bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

// available is _check_available: systemctl status exits 0–3 for a unit
// that exists (systemd 231 and later).
func (s systemd) available(ctx context.Context, j *job, name string) (bool, error) {
	r, err := j.exec(ctx, s.systemctl(j, false, "status", name)...)
	if err != nil {
		return false, err
	}
	return r.Retcode >= 0 && r.Retcode < 4, nil
}

// initScripts lists the executable scripts of /etc/init.d.
func initScripts(j *job) []string {
	ents, err := os.ReadDir(j.path("/etc/init.d"))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		info, err := e.Info()
		if err != nil || info.IsDir() || info.Mode()&0o111 == 0 || e.Name() == "README" {
			continue
		}
		out = append(out, e.Name())
	}
	return out
}
