package pkg

import (
	"context"
	"regexp"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/modules/pkg/syscmd"
)

// apt is salt/modules/aptpkg.py: apt-get and apt-cache for the
// repositories, dpkg-query for the database.
type apt struct{}

// dpkgEnv is aptpkg's DPKG_ENV_VARS, set for every command that may run
// maintainer scripts so that nothing prompts.
var dpkgEnv = []string{
	"APT_LISTBUGS_FRONTEND=none",
	"APT_LISTCHANGES_FRONTEND=none",
	"DEBIAN_FRONTEND=noninteractive",
	"UCF_FORCE_CONFFOLD=1",
}

// dpkgQueryFormat is the --showformat of aptpkg.list_pkgs.
const dpkgQueryFormat = "${Status} ${Package} ${Version} ${Architecture}\n"

// scoped is _call_apt with scope=True: systemd-run --scope with the
// module's name as the description, quotes included as Salt passes them.
func (apt) scoped(j *job, args ...string) []string {
	s := j.scope(args...)
	if len(s) > len(args) {
		return append([]string{"systemd-run", "--scope", "--description", `"salt.modules.aptpkg"`}, args...)
	}
	return args
}

func (apt) list(ctx context.Context, j *job) (*lists, error) {
	r, err := j.exec(ctx, syscmd.Cmd{Args: []string{"dpkg-query", "--showformat", dpkgQueryFormat, "-W"}})
	if err != nil {
		return nil, err
	}
	l := newLists()
	env := j.env()
	multiarch := grainStr(env, "cpuarch") == "x86_64" && grainStr(env, "osarch") == "amd64"
	for _, line := range strings.Split(r.Stdout, "\n") {
		cols := strings.Fields(line)
		if len(cols) < 6 {
			continue
		}
		want, status, name, ver, arch := cols[0], cols[2], cols[3], cols[4], cols[5]
		if multiarch && arch != "all" && arch != "amd64" {
			name += ":" + arch
		}
		switch {
		case (strings.Contains(want, "install") || strings.Contains(want, "hold")) && strings.Contains(status, "installed"):
			addPkg(l.installed, name, ver)
		case strings.Contains(want, "deinstall"):
			addPkg(l.removed, name, ver)
		case strings.Contains(want, "purge") && status == "installed":
			addPkg(l.purge, name, ver)
		}
	}
	return l, nil
}

func (a apt) prefix(j *job, in *installPlan) []string {
	cmd := []string{"apt-get", "-q", "-y"}
	if j.kwBool("force_yes") {
		cmd = append(cmd, "--force-yes")
	}
	if j.kwBool("force_conf_new") {
		cmd = append(cmd, "-o", "DPkg::Options::=--force-confnew")
	} else {
		cmd = append(cmd, "-o", "DPkg::Options::=--force-confold", "-o", "DPkg::Options::=--force-confdef")
	}
	if v, ok := j.kw("install_recommends"); ok && v != nil {
		if isTrue(v) {
			cmd = append(cmd, "--install-recommends")
		} else {
			cmd = append(cmd, "--no-install-recommends")
		}
	}
	if j.kwBool("only_upgrade") {
		cmd = append(cmd, "--only-upgrade")
	}
	if j.kwBool("skip_verify") {
		cmd = append(cmd, "--allow-unauthenticated")
	}
	if in.fromrepo != "" && !in.file {
		cmd = append(cmd, "-t", in.fromrepo)
	}
	return append(cmd, "install")
}

func (a apt) installCmds(j *job, in *installPlan) []syscmd.Cmd {
	prefix := a.prefix(j, in)
	var cmds []syscmd.Cmd
	add := func(args []string) {
		if j.kwBool("downloadonly") {
			args = append(args, "--download-only")
		}
		cmds = append(cmds, syscmd.Cmd{Args: a.scoped(j, args...), Env: dpkgEnv})
	}
	if len(in.targets) > 0 {
		add(append(append([]string(nil), prefix...), in.targets...))
	}
	if len(in.downgrade) > 0 {
		cmd := append([]string(nil), prefix[:len(prefix)-1]...)
		if !in.file && !contains(cmd, "--force-yes") {
			cmd = append(cmd, "--force-yes")
		}
		add(append(append(cmd, "install"), in.downgrade...))
	}
	if len(in.reinstall) > 0 {
		cmd := append([]string(nil), prefix...)
		if !in.file {
			cmd = append(cmd, "--reinstall")
		}
		add(append(cmd, in.reinstall...))
	}
	return cmds
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func (a apt) removeCmd(j *job, action string, targets []string) syscmd.Cmd {
	args := append([]string{"apt-get", "-q", "-y", action}, targets...)
	return syscmd.Cmd{Args: a.scoped(j, args...), Env: dpkgEnv}
}

var sizeSuffix = regexp.MustCompile(` \[.+B\]$`)

// refresh is aptpkg.refresh_db: apt-get -q update, each source reported
// as true (fetched), nil (hit, unchanged) or false (ignored or failed).
func (apt) refresh(ctx context.Context, j *job) (any, error) {
	r, err := j.execLocked(ctx, syscmd.Cmd{Args: []string{"apt-get", "-q", "update"}})
	if err != nil {
		return nil, err
	}
	if r.Retcode != 0 {
		return nil, modules.Errorf("%s", r.Stderr)
	}
	ret := ordered.New()
	var failed []string
	for _, line := range strings.Split(r.Stdout, "\n") {
		cols := strings.Fields(line)
		if len(cols) == 0 {
			continue
		}
		ident := strings.Join(cols[1:], " ")
		switch {
		case strings.Contains(cols[0], "Get"):
			ret.Set(sizeSuffix.ReplaceAllString(ident, ""), true)
		case strings.Contains(cols[0], "Ign"):
			ret.Set(ident, false)
		case strings.Contains(cols[0], "Hit"):
			ret.Set(ident, nil)
		case strings.Contains(cols[0], "Err"):
			ret.Set(ident, false)
			failed = append(failed, ident)
		}
	}
	if isTrue(j.c.Arg("failhard")) && len(failed) > 0 {
		return nil, modules.Errorf("Error getting repos: %s", strings.Join(failed, ", "))
	}
	return ret, nil
}

// candidates reads "Candidate:" from apt-cache policy, one call per name.
func (apt) candidates(ctx context.Context, j *job, names []string) (map[string]string, error) {
	out := map[string]string{}
	for _, n := range names {
		args := []string{"apt-cache", "-q", "policy", n}
		if repo := j.kwStr("fromrepo"); repo != "" {
			args = append(args, "-o", "APT::Default-Release="+repo)
		}
		r, err := j.exec(ctx, syscmd.Cmd{Args: args})
		if err != nil {
			return nil, err
		}
		out[n] = ""
		for _, line := range strings.Split(r.Stdout, "\n") {
			if !strings.Contains(line, "Candidate") {
				continue
			}
			if f := strings.Fields(line); len(f) >= 2 && !strings.EqualFold(f[len(f)-1], "(none)") {
				out[n] = f[len(f)-1]
			}
			break
		}
	}
	return out, nil
}

func (a apt) upgradeCmd(j *job) syscmd.Cmd {
	cmd := []string{"apt-get", "-q", "-y"}
	if j.kwBool("force_conf_new") {
		cmd = append(cmd, "-o", "DPkg::Options::=--force-confnew")
	} else {
		cmd = append(cmd, "-o", "DPkg::Options::=--force-confold", "-o", "DPkg::Options::=--force-confdef")
	}
	if j.kwBool("force_yes") {
		cmd = append(cmd, "--force-yes")
	}
	if j.kwBool("skip_verify") {
		cmd = append(cmd, "--allow-unauthenticated")
	}
	if j.kwBool("download_only") || j.kwBool("downloadonly") {
		cmd = append(cmd, "--download-only")
	}
	if j.kwBool("allow_downgrades") {
		cmd = append(cmd, "--allow-downgrades")
	}
	if j.kwBool("dist_upgrade") {
		cmd = append(cmd, "dist-upgrade")
	} else {
		cmd = append(cmd, "upgrade")
	}
	return syscmd.Cmd{Args: a.scoped(j, cmd...), Env: dpkgEnv}
}

func (apt) target(name, version string) string { return name + "=" + version }

func (apt) cmp(a, b string) int { return DebianCompare(a, b) }

// errText: aptpkg reports stderr, and only when there is some.
func (apt) errText(r syscmd.Result) string { return r.Stderr }
