package pkg

import (
	"context"
	"strings"

	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/modules/pkg/syscmd"
)

// apk is salt/modules/apkpkg.py (Alpine).
type apk struct{}

// splitAPK splits "name-1.2-r0" into the name and "1.2-r0" as apkpkg
// does: the version is the last two dash-separated fields.
func splitAPK(s string) (name, version string) {
	f := strings.Split(s, "-")
	if len(f) < 3 {
		return "", ""
	}
	return strings.Join(f[:len(f)-2], "-"), strings.Join(f[len(f)-2:], "-")
}

func (apk) list(ctx context.Context, j *job) (*lists, error) {
	r, err := j.exec(ctx, syscmd.Cmd{Args: []string{"apk", "info", "-v"}})
	if err != nil {
		return nil, err
	}
	l := newLists()
	for _, line := range strings.Split(r.Stdout, "\n") {
		if name, ver := splitAPK(strings.TrimSpace(line)); name != "" {
			addPkg(l.installed, name, ver)
		}
	}
	return l, nil
}

// installCmds is apkpkg.install: one `apk add`, with -u when upgrading
// and "name=version" for pinned versions.
func (apk) installCmds(j *job, in *installPlan) []syscmd.Cmd {
	all := append(append(append([]string(nil), in.targets...), in.downgrade...), in.reinstall...)
	if len(all) == 0 {
		return nil
	}
	args := []string{"apk", "add"}
	if in.file {
		args = append(args, "--allow-untrusted")
	}
	return []syscmd.Cmd{{Args: append(args, all...)}}
}

func (apk) removeCmd(_ *job, action string, targets []string) syscmd.Cmd {
	args := []string{"apk", "del"}
	if action == "purge" {
		args = append(args, "--purge")
	}
	return syscmd.Cmd{Args: append(args, targets...)}
}

func (apk) refresh(ctx context.Context, j *job) (any, error) {
	r, err := j.exec(ctx, syscmd.Cmd{Args: []string{"apk", "update"}})
	if err != nil {
		return nil, err
	}
	if r.Retcode != 0 {
		return nil, modules.Errorf("%s", r.Stderr)
	}
	return true, nil
}

// candidates is apkpkg.latest_version: upgrades from `apk upgrade -s`
// ("(1/2) Upgrading name (old -> new)"), then `apk search` for the rest.
func (a apk) candidates(ctx context.Context, j *job, names []string) (map[string]string, error) {
	out := map[string]string{}
	for _, n := range names {
		out[n] = ""
	}
	r, err := j.exec(ctx, syscmd.Cmd{Args: []string{"apk", "upgrade", "-s"}})
	if err != nil {
		return nil, err
	}
	for _, line := range strings.Split(r.Stdout, "\n") {
		f := strings.Split(line, " ")
		if len(f) < 6 {
			continue
		}
		if _, ok := out[f[2]]; ok {
			out[f[2]] = strings.TrimSuffix(f[5], ")")
		}
	}
	for _, n := range names {
		if out[n] != "" {
			continue
		}
		r, err := j.exec(ctx, syscmd.Cmd{Args: []string{"apk", "search", n}})
		if err != nil {
			return nil, err
		}
		for _, line := range strings.Split(r.Stdout, "\n") {
			if name, ver := splitAPK(strings.TrimSpace(line)); name == n {
				out[n] = ver
			}
		}
	}
	return out, nil
}

func (apk) upgradeCmd(*job) syscmd.Cmd { return syscmd.Cmd{Args: []string{"apk", "upgrade"}} }

func (apk) target(name, version string) string { return name + "=" + version }

// cmp compares apk versions with the Debian rules, which order the
// usual "1.2.3-r4" forms the same way.
func (apk) cmp(a, b string) int { return DebianCompare(a, b) }

func (apk) errText(r syscmd.Result) string {
	if r.Stderr != "" {
		return r.Stderr
	}
	return r.Stdout
}
