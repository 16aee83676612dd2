package pkg

import (
	"context"
	"regexp"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/modules/pkg/syscmd"
)

var aptConf = regexp.MustCompile(`(?m)^Conf ([^ ]+) \(([^ ]+)`)

// listUpgrades is pkg.list_upgrades: {name: new version} for every
// package an upgrade would change, after an optional refresh.
func (m *Module) listUpgrades(ctx context.Context, c *modules.Call) (any, error) {
	j, err := m.newJob(c)
	if err != nil {
		return nil, err
	}
	if isTrue(c.Arg("refresh")) {
		if _, err := j.refresh(ctx); err != nil {
			return nil, err
		}
	}
	out := ordered.New()
	switch p := j.p.(type) {
	case apt:
		err = p.upgradable(ctx, j, out)
	case *yum:
		err = p.upgradable(ctx, j, out)
	case apk:
		err = p.upgradable(ctx, j, out)
	}
	return out, err
}

// upgradable is aptpkg._get_upgradable: the "Conf" lines of a simulated
// (dist-)upgrade.
func (apt) upgradable(ctx context.Context, j *job, out *ordered.Map) error {
	args := []string{"apt-get", "--just-print", "upgrade"}
	if v, ok := j.kw("dist_upgrade"); !ok || isTrue(v) {
		args[2] = "dist-upgrade"
	}
	if repo := j.kwStr("fromrepo"); repo != "" {
		args = append(args, "-o", "APT::Default-Release="+repo)
	}
	r, err := j.execLocked(ctx, syscmd.Cmd{Args: args})
	if err != nil {
		return err
	}
	if r.Retcode != 0 {
		msg := "Failed to get upgrades"
		if r.Stderr != "" {
			msg += ": " + r.Stderr
		} else if r.Stdout != "" {
			msg += ": " + r.Stdout
		}
		return modules.Errorf("%s", msg)
	}
	for _, m := range aptConf.FindAllStringSubmatch(r.Stdout, -1) {
		out.Set(m[1], m[2])
	}
	return nil
}

// upgradable is yumpkg.list_upgrades: `list upgrades` (`list updates`
// for yum).
func (y *yum) upgradable(ctx context.Context, j *job, out *ordered.Map) error {
	verb := "upgrades"
	if y.bin == "yum" {
		verb = "updates"
	}
	args := append(append([]string{"--quiet"}, y.options(j)...), "list", verb)
	r, err := j.exec(ctx, syscmd.Cmd{Args: y.call(j, args...)})
	if err != nil {
		return err
	}
	if r.Retcode != 0 && r.Retcode != 1 {
		return modules.Errorf("%s", y.errText(r))
	}
	for _, p := range yumPkgInfo(r.Stdout, grainStr(j.env(), "osarch")) {
		out.Set(p.name, p.version)
	}
	return nil
}

// upgradable is apkpkg.list_upgrades: "(1/2) Upgrading name (old -> new)"
// lines of a simulated upgrade.
func (apk) upgradable(ctx context.Context, j *job, out *ordered.Map) error {
	r, err := j.exec(ctx, syscmd.Cmd{Args: []string{"apk", "upgrade", "-s"}})
	if err != nil {
		return err
	}
	for _, line := range strings.Split(r.Stdout, "\n") {
		f := strings.Split(line, " ")
		if len(f) >= 6 && f[1] == "Upgrading" {
			out.Set(f[2], strings.TrimSuffix(f[5], ")"))
		}
	}
	return nil
}
