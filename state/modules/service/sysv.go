package service

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/brinesalt/brine/state/modules"
)

// sysv drives /etc/init.d scripts: through `service` and update-rc.d
// as salt/modules/debian_service.py does, through chkconfig as
// rh_service.py does, or, with neither tool installed, by running the
// script and linking it into /etc/rcN.d directly.
type sysv struct{}

// runner returns the command running verb on the service: rh_service's
// `/sbin/service NAME VERB` on chkconfig hosts, debian_service's
// `service NAME VERB` when the service tool exists, else the init
// script itself.
func (sysv) runner(j *job, name, verb string) []string {
	if j.which("update-rc.d") == "" && j.which("chkconfig") != "" {
		return []string{"/sbin/service", name, verb}
	}
	if s := j.which("service"); s != "" {
		return []string{"service", name, verb}
	}
	return []string{j.path("/etc/init.d/" + name), verb}
}

// action is debian_service's start/stop/restart/reload: the result is
// whether the script exited 0.
func (s sysv) action(ctx context.Context, j *job, name, verb string) (any, error) {
	r, err := j.exec(ctx, s.runner(j, name, verb)...)
	if err != nil {
		return nil, err
	}
	return r.Retcode == 0, nil
}

func (s sysv) status(ctx context.Context, j *job, name string) (bool, error) {
	r, err := j.exec(ctx, s.runner(j, name, "status")...)
	return err == nil && r.Retcode == 0, err
}

// runlevel is debian_service._get_runlevel: the second field of
// `runlevel`, 2 when it says unknown.
func (sysv) runlevel(ctx context.Context, j *job) string {
	r, err := j.exec(ctx, "runlevel")
	if err != nil || strings.Contains(r.Stdout, "unknown") {
		return "2"
	}
	f := strings.Fields(r.Stdout)
	if len(f) < 2 {
		return "2"
	}
	return f[1]
}

var leadingOrder = regexp.MustCompile(`^[SK]\d+`)

// enabledSet is get_enabled: the services with an S link in /etc/rcS.d
// or the current runlevel's directory.
func (s sysv) enabledSet(ctx context.Context, j *job) map[string]bool {
	out := map[string]bool{}
	for _, lvl := range []string{"S", s.runlevel(ctx, j)} {
		ms, _ := filepath.Glob(j.path("/etc/rc" + lvl + ".d/S*"))
		for _, m := range ms {
			out[leadingOrder.ReplaceAllString(filepath.Base(m), "")] = true
		}
	}
	return out
}

func (s sysv) enabled(ctx context.Context, j *job, name string) (bool, error) {
	if j.which("update-rc.d") == "" && j.which("chkconfig") != "" {
		return s.chkconfigEnabled(ctx, j, name)
	}
	return s.enabledSet(ctx, j)[name], nil
}

// chkconfigEnabled is rh_service._sysv_is_enabled: chkconfig lists the
// service as on in the current runlevel.
func (s sysv) chkconfigEnabled(ctx context.Context, j *job, name string) (bool, error) {
	r, err := j.exec(ctx, "/sbin/chkconfig", "--list", name)
	if err != nil || r.Retcode != 0 {
		return false, err
	}
	return strings.Contains(r.Stdout, s.runlevel(ctx, j)+":on"), nil
}

// enable is debian_service.enable: `insserv NAME && update-rc.d NAME
// enable`. Debian 12 ships no insserv, and there update-rc.d defaults
// makes the links instead (a documented difference: Salt fails there).
// With chkconfig it is `chkconfig NAME on`; with neither tool the S20
// and K20 links are made directly.
func (s sysv) enable(ctx context.Context, j *job, name string) (bool, error) {
	switch {
	case j.which("update-rc.d") != "":
		first := []string{"update-rc.d", name, "defaults"}
		if j.which("insserv") != "" {
			first = []string{"insserv", name}
		}
		r, err := j.exec(ctx, first...)
		if err != nil || r.Retcode != 0 {
			return false, err
		}
		r, err = j.exec(ctx, "update-rc.d", name, "enable")
		return err == nil && r.Retcode == 0, err
	case j.which("chkconfig") != "":
		r, err := j.exec(ctx, "/sbin/chkconfig", name, "on")
		return err == nil && r.Retcode == 0, err
	}
	return s.links(j, name, true)
}

func (s sysv) disable(ctx context.Context, j *job, name string) (bool, error) {
	switch {
	case j.which("update-rc.d") != "":
		r, err := j.exec(ctx, "update-rc.d", name, "disable")
		return err == nil && r.Retcode == 0, err
	case j.which("chkconfig") != "":
		r, err := j.exec(ctx, "/sbin/chkconfig", name, "off")
		return err == nil && r.Retcode == 0, err
	}
	return s.links(j, name, false)
}

// links makes or removes the rc links of name by hand: S20 in runlevels
// 2–5 and K20 in 0, 1 and 6 when enabling; every S link when disabling.
func (sysv) links(j *job, name string, on bool) (bool, error) {
	for _, lvl := range []string{"0", "1", "2", "3", "4", "5", "6"} {
		dir := j.path("/etc/rc" + lvl + ".d")
		old, _ := filepath.Glob(filepath.Join(dir, "[SK][0-9][0-9]"+name))
		for _, o := range old {
			if err := os.Remove(o); err != nil {
				return false, modules.Errorf("disable %s: %w", name, err)
			}
		}
		kind := "K20"
		if on && strings.Contains("2345", lvl) {
			kind = "S20"
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return false, modules.Errorf("enable %s: %w", name, err)
		}
		if err := os.Symlink("../init.d/"+name, filepath.Join(dir, kind+name)); err != nil {
			return false, modules.Errorf("enable %s: %w", name, err)
		}
	}
	return true, nil
}

// all is debian_service.get_all: the scripts of /etc/init.d (but README)
// and whatever is enabled.
func (s sysv) all(ctx context.Context, j *job) ([]string, error) {
	seen := map[string]bool{}
	ents, _ := os.ReadDir(j.path("/etc/init.d"))
	for _, e := range ents {
		if e.Name() != "README" {
			seen[e.Name()] = true
		}
	}
	for n := range s.enabledSet(ctx, j) {
		seen[n] = true
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	return out, nil
}

func (s sysv) available(ctx context.Context, j *job, name string) (bool, error) {
	all, err := s.all(ctx, j)
	return contains(all, name), err
}
