package pkg

import (
	"context"
	"sort"
	"strings"

	"github.com/brinesalt/brine/state/modules/pkg/syscmd"
)

// yum is salt/modules/yumpkg.py: rpm for the database, dnf5, dnf, tdnf
// or yum for the repositories.
type yum struct{ bin string }

// rpmQueryFormat is salt.utils.pkg.rpm.QUERYFORMAT with the repository
// replaced as list_pkgs does.
const rpmQueryFormat = "%{NAME}_|-%{EPOCH}_|-%{VERSION}_|-%{RELEASE}_|-%{ARCH}_|-(none)_|-%{INSTALLTIME}\n"

func (y *yum) call(j *job, args ...string) []string {
	return j.scope(append([]string{y.bin}, args...)...)
}

func (y *yum) list(ctx context.Context, j *job) (*lists, error) {
	r, err := j.exec(ctx, syscmd.Cmd{Args: []string{"rpm", "-qa", "--nodigest", "--nosignature", "--queryformat", rpmQueryFormat}})
	if err != nil {
		return nil, err
	}
	l := newLists()
	osarch := grainStr(j.env(), "osarch")
	for _, line := range strings.Split(r.Stdout, "\n") {
		f := strings.Split(line, "_|-")
		if len(f) != 7 {
			continue
		}
		name, epoch, ver, rel, arch := f[0], f[1], f[2], f[3], f[4]
		if !rpm32(arch, osarch) && arch != osarch && arch != "noarch" {
			name += "." + arch
		}
		if rel != "" {
			ver += "-" + rel
		}
		if epoch != "(none)" && epoch != "0" {
			ver = epoch + ":" + ver
		}
		addPkg(l.installed, name, ver)
	}
	return l, nil
}

// rpm32 is salt.utils.pkg.rpm.check_32: both arches 32-bit x86 or both
// 32-bit ARM.
func rpm32(arch, osarch string) bool {
	x86 := map[string]bool{"i386": true, "i486": true, "i586": true, "i686": true, "athlon": true, "geode": true, "pentium3": true, "pentium4": true}
	arm := map[string]bool{"armv3l": true, "armv4b": true, "armv4l": true, "armv5tel": true, "armv5tejl": true, "armv6l": true, "armv6hl": true, "armv7l": true, "armv7hl": true, "armv7hnl": true}
	return (x86[arch] && x86[osarch]) || (arm[arch] && arm[osarch])
}

// options is yumpkg._get_options for fromrepo, enablerepo and
// disablerepo.
func (y *yum) options(j *job) []string {
	var out []string
	if repo := j.kwStr("fromrepo"); repo != "" {
		out = append(out, "--disablerepo=*", "--enablerepo="+repo)
	} else {
		for _, k := range []string{"disablerepo", "enablerepo"} {
			for _, r := range strings.Split(j.kwStr(k), ",") {
				if r != "" {
					out = append(out, "--"+k+"="+r)
				}
			}
		}
	}
	if v := j.kwStr("disableexcludes"); v != "" {
		out = append(out, "--disableexcludes="+v)
	}
	return out
}

func (y *yum) common(j *job) []string {
	cmd := y.options(j)
	if j.kwBool("skip_verify") {
		cmd = append(cmd, "--nogpgcheck")
	}
	if j.kwBool("downloadonly") {
		cmd = append(cmd, "--downloadonly")
	}
	return cmd
}

func (y *yum) installCmds(j *job, in *installPlan) []syscmd.Cmd {
	var cmds []syscmd.Cmd
	if len(in.targets) > 0 {
		cmd := []string{"-y"}
		if y.bin == "dnf" {
			cmd = append(cmd, "--best", "--allowerasing")
		}
		cmd = append(append(cmd, y.common(j)...), "install")
		if y.bin == "dnf5" {
			cmd = append(cmd, "--best", "--allowerasing")
		}
		cmds = append(cmds, syscmd.Cmd{Args: y.call(j, append(cmd, in.targets...)...)})
	}
	if len(in.downgrade) > 0 {
		cmd := append(append([]string{"-y"}, y.common(j)...), "downgrade")
		cmds = append(cmds, syscmd.Cmd{Args: y.call(j, append(cmd, in.downgrade...)...)})
	}
	if len(in.reinstall) > 0 {
		cmd := append(append([]string{"-y"}, y.common(j)...), "reinstall")
		cmds = append(cmds, syscmd.Cmd{Args: y.call(j, append(cmd, in.reinstall...)...)})
	}
	return cmds
}

func (y *yum) removeCmd(j *job, _ string, targets []string) syscmd.Cmd {
	return syscmd.Cmd{Args: y.call(j, append([]string{"-y", "remove"}, targets...)...)}
}

// refresh is yumpkg.refresh_db: expire the cache, then check-update,
// whose exit status 100 means updates are available (True), 0 none
// (None) and 1 an error (False).
func (y *yum) refresh(ctx context.Context, j *job) (any, error) {
	opts := y.options(j)
	if _, err := j.exec(ctx, syscmd.Cmd{Args: y.call(j, append([]string{"--quiet", "--assumeyes", "clean", "expire-cache"}, opts...)...)}); err != nil {
		return nil, err
	}
	if v, ok := j.kw("check_update"); ok && !isTrue(v) {
		return true, nil
	}
	r, err := j.exec(ctx, syscmd.Cmd{Args: y.call(j, append([]string{"--quiet", "--assumeyes", "check-update"}, opts...)...)})
	if err != nil {
		return nil, err
	}
	switch r.Retcode {
	case 100:
		return true, nil
	case 0:
		return nil, nil
	}
	return false, nil
}

// candidates parses `list available`, keeping the highest version of
// each name.
func (y *yum) candidates(ctx context.Context, j *job, names []string) (map[string]string, error) {
	args := append(append([]string{"--quiet"}, y.options(j)...), "list", "available")
	r, err := j.exec(ctx, syscmd.Cmd{Args: y.call(j, append(args, names...)...)})
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, n := range names {
		out[n] = ""
	}
	if r.Retcode != 0 {
		return out, nil
	}
	osarch := grainStr(j.env(), "osarch")
	for _, p := range yumPkgInfo(r.Stdout, osarch) {
		if cur, ok := out[p.name]; ok && (cur == "" || y.cmp(p.version, cur) > 0) {
			out[p.name] = p.version
		}
	}
	return out, nil
}

type yumInfo struct{ name, version string }

// yumPkgInfo is yumpkg._yum_pkginfo: whitespace-separated triples of
// name.arch, version and repository after the section headers.
func yumPkgInfo(output, osarch string) []yumInfo {
	var words []string
	for _, line := range strings.Split(output, "\n") {
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "installed packages", "available packages", "available upgrades", "updated packages", "upgraded packages":
			continue
		}
		words = append(words, strings.Fields(line)...)
	}
	var out []yumInfo
	for i := 0; i+2 < len(words); i += 3 {
		name, arch := words[i], ""
		if k := strings.LastIndex(name, "."); k > 0 {
			name, arch = name[:k], name[k+1:]
		}
		if arch != "" && !rpm32(arch, osarch) && arch != osarch && arch != "noarch" {
			name += "." + arch
		}
		out = append(out, yumInfo{name: name, version: words[i+1]})
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].name < out[b].name })
	return out
}

func (y *yum) upgradeCmd(j *job) syscmd.Cmd {
	cmd := append([]string{"--quiet", "-y"}, y.options(j)...)
	if j.kwBool("skip_verify") {
		cmd = append(cmd, "--nogpgcheck")
	}
	if y.bin == "yum" {
		cmd = append(cmd, "update")
	} else {
		cmd = append(cmd, "upgrade")
	}
	return syscmd.Cmd{Args: y.call(j, cmd...)}
}

func (y *yum) target(name, version string) string { return name + "-" + version }

func (y *yum) cmp(a, b string) int { return RPMCompare(a, b) }

// errText: yumpkg runs with stderr redirected into stdout.
func (y *yum) errText(r syscmd.Result) string {
	return strings.TrimSpace(strings.Join([]string{r.Stdout, r.Stderr}, "\n"))
}
