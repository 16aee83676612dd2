package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/goreleaser/nfpm/v2"
	_ "github.com/goreleaser/nfpm/v2/deb" // registers the deb packager
	"github.com/goreleaser/nfpm/v2/files"
	_ "github.com/goreleaser/nfpm/v2/rpm" // registers the rpm packager
)

// Inputs are what a build packs.
type Inputs struct {
	// Src is the packaging directory (units, init script, configs,
	// maintainer scripts).
	Src string
	// Bin holds the commands per architecture (Bin/linux-<arch>/<cmd>)
	// and the thin binaries (Bin/salt-thin[-core]-linux-<arch>[.zst]), as
	// the Makefile builds them.
	Bin string
	// Version is the package version without the epoch.
	Version string
	// Time is SOURCE_DATE_EPOCH: every file's mtime and the build time.
	Time time.Time
	// ThinArchs are the target architectures whose thin binaries the
	// shared package carries, whatever its own architecture.
	ThinArchs []string
}

// ErrMissingBinary is returned when a command or thin binary a package
// needs was not built.
var ErrMissingBinary = errors.New("binary not built")

// Target is one package file to build.
type Target struct {
	Spec   Spec
	Family Family
	Arch   string // Go's name: amd64, arm64
}

// Build writes t's package into outDir and returns its path. Scripts
// are rendered into work, a scratch directory.
func Build(in Inputs, t Target, outDir, work string) (string, error) {
	info, err := packageInfo(in, t, work)
	if err != nil {
		return "", err
	}
	pkger, err := nfpm.Get(string(t.Family))
	if err != nil {
		return "", err
	}
	if err := nfpm.PrepareForPackager(info, string(t.Family)); err != nil {
		return "", fmt.Errorf("%s: %w", info.Name, err)
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return "", err
	}
	path := filepath.Join(outDir, pkger.ConventionalFileName(info))
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	if err := pkger.Package(info, f); err != nil {
		f.Close()
		os.Remove(path)
		return "", fmt.Errorf("package %s: %w", info.Name, err)
	}
	return path, f.Close()
}

// fullVersion is the version with the epoch, as a dependency names it.
func fullVersion(f Family, v string) string {
	if f == RPM {
		return Epoch + ":" + v + "-" + rpmRelease
	}
	return Epoch + ":" + v
}

// rpmRelease is the RPM Release of every build of a version.
const rpmRelease = "1"

// compression is both families' payload compression: gzip, as Salt's rpm
// (w2.gzdio), readable by every dpkg and rpm. xz would make the packages
// about a fifth smaller, but Go's xz encoder takes minutes over the
// binaries on a small machine, for every build and every test.
const compression = "gzip"

// packageInfo is nfpm's description of target t.
func packageInfo(in Inputs, t Target, work string) (*nfpm.Info, error) {
	s, f := t.Spec, t.Family
	contents, err := packageContents(in, t, work)
	if err != nil {
		return nil, err
	}
	info := &nfpm.Info{
		Name: s.PackageName(f), Arch: t.Arch, Platform: "linux",
		Epoch: Epoch, Version: in.Version, VersionSchema: "none",
		Section: "admin", Priority: "optional",
		Maintainer:  "Brine developers <noreply@brinesalt.invalid>",
		Description: s.Summary + "\n" + wrap(s.Description, 72),
		Vendor:      "Brine", Homepage: "https://github.com/brinesalt/brine", License: "Apache-2.0",
		MTime: in.Time,
	}
	if f == RPM {
		info.Release = rpmRelease
		info.Description = wrap(s.Description, 72)
	}
	o := &info.Overridables
	o.Contents = contents
	o.Depends = depends(s, f, in.Version)
	o.Provides = provides(s, f, in.Version)
	if f == Deb {
		o.Replaces, o.Deb.Breaks = debReplaces(s)
		o.Deb.Compression = compression
		if s.Name == "salt-common" {
			o.Deb.Predepends = []string{"passwd"}
		}
	} else {
		o.Replaces = rpmObsoletes(s) // nfpm writes an rpm's Replaces as Obsoletes
		o.RPM.Summary = s.Summary
		o.RPM.Group = "System Environment/Daemons"
		o.RPM.BuildHost = "brine"
		o.RPM.Packager = info.Maintainer
		o.RPM.Compression = compression
	}
	if err := setScripts(in, t, work, info); err != nil {
		return nil, err
	}
	return info, nil
}

// depends names the exact-version dependency of s and its family's own.
func depends(s Spec, f Family, v string) []string {
	var out []string
	if base, ok := dependsOn[s.Name]; ok {
		b, _ := SpecByName(base)
		op := " (= %s)"
		if f == RPM {
			op = " = %s"
		}
		out = append(out, b.PackageName(f)+fmt.Sprintf(op, fullVersion(f, v)))
	}
	if s.Daemon != nil && f == Deb {
		out = append(out, "init-system-helpers") // update-rc.d
	}
	return append(out, s.Depends[f]...)
}

// provides names the package by its Brine name (brine-salt-minion), so a
// site can tell Brine's package from Salt's; an rpm also provides its
// own name at its version, as Salt's spec does.
func provides(s Spec, f Family, v string) []string {
	if f == RPM {
		return []string{s.PackageName(f) + " = " + fullVersion(f, v), "brine-" + s.Name + " = " + fullVersion(f, v)}
	}
	return []string{"brine-" + s.Name + " (= " + fullVersion(f, v) + ")"}
}

// anySalt is an upper bound of every release of Salt's own packages
// (they have no epoch, so all sort below epoch 1) that is itself below
// every Brine version: "~" sorts before anything, even the end of the
// string, so an untagged 1:0~git42.gabc1234 is above 1:0~ where it
// would be below 1:0 (TestVersionsSort asks dpkg and rpm).
const anySalt = Epoch + ":0~"

// debReplaces: Salt's salt-common carries every command of its onedir
// under /opt/saltstack/salt, where Brine's salt-master, salt-minion and
// salt-ssh put theirs, so those take the files over from any Salt
// salt-common (Replaces) and need it upgraded with them (Breaks). Salt's
// salt-cloud needs Salt's salt-master, which Brine's replaces.
func debReplaces(s Spec) (replaces, breaks []string) {
	if s.Name != "salt-common" {
		replaces = []string{"salt-common (<< " + anySalt + ")"}
		breaks = []string{"salt-common (<< " + anySalt + ")"}
	}
	if s.BreaksCloud {
		breaks = append(breaks, "salt-cloud (<< "+anySalt+")")
	}
	return replaces, breaks
}

// rpmObsoletes are Salt's own obsolete names and, for the master, Salt's
// salt-cloud.
func rpmObsoletes(s Spec) []string {
	out := append([]string(nil), s.SaltObsoletes...)
	if s.BreaksCloud {
		out = append(out, "salt-cloud < "+anySalt)
	}
	return out
}

// packageContents lists every directory, file and link of target t;
// a command or thin binary that was not built is ErrMissingBinary.
func packageContents(in Inputs, t Target, work string) (files.Contents, error) {
	s, f := t.Spec, t.Family
	var c files.Contents
	for _, d := range s.Dirs {
		c = append(c, dir(d, f))
	}
	for _, cmd := range s.CommandsFor(f) {
		src := filepath.Join(in.Bin, "linux-"+t.Arch, cmd)
		if err := mustExist(src, s.PackageName(f), "command "+cmd, t.Arch); err != nil {
			return nil, err
		}
		dst := OptDir + "/" + cmd
		c = append(c, file(src, dst, 0o755, files.TypeFile), link(BinDir+"/"+cmd, dst))
	}
	if s.Thin {
		thin, err := thinContents(in, s.PackageName(f))
		if err != nil {
			return nil, err
		}
		c = append(c, thin...)
	}
	cfgType := files.TypeConfig
	if f == RPM {
		cfgType = files.TypeConfigNoReplace
	}
	for _, name := range s.Configs {
		c = append(c, file(filepath.Join(in.Src, "conf", name), "/etc/salt/"+name, configMode[f], cfgType))
	}
	if s.Logrotate {
		dst := map[Family]string{Deb: "/etc/logrotate.d/salt-common", RPM: "/etc/logrotate.d/salt"}[f]
		c = append(c, file(filepath.Join(in.Src, "logrotate", "salt-common"), dst, 0o644, cfgType))
	}
	if s.Daemon != nil {
		d, err := daemonContents(in, t, work)
		if err != nil {
			return nil, err
		}
		c = append(c, d...)
	}
	return c, nil
}

// thinContents are the thin binaries, full and core, of every thin
// architecture, with their zstd copies where the Makefile made them.
func thinContents(in Inputs, pkg string) (files.Contents, error) {
	var c files.Contents
	for _, a := range in.ThinArchs {
		for _, flavor := range []string{"salt-thin", "salt-thin-core"} {
			name := flavor + "-linux-" + a
			src := filepath.Join(in.Bin, name)
			if err := mustExist(src, pkg, "thin binary "+name, a); err != nil {
				return nil, err
			}
			c = append(c, file(src, OptDir+"/"+name, 0o755, files.TypeFile))
			if _, err := os.Stat(src + ".zst"); err == nil {
				c = append(c, file(src+".zst", OptDir+"/"+name+".zst", 0o644, files.TypeFile))
			}
		}
	}
	return c, nil
}

// daemonContents are a service's systemd unit and SysV script. The
// script is a conffile on Debian (policy: everything in /etc) and a plain
// file on Red Hat (its packaging guidelines).
func daemonContents(in Inputs, t Target, work string) (files.Contents, error) {
	name := t.Spec.Name
	script, err := renderInit(in.Src, work, t.Spec)
	if err != nil {
		return nil, err
	}
	initType := files.TypeConfig
	if t.Family == RPM {
		initType = files.TypeFile
	}
	return files.Contents{
		file(filepath.Join(in.Src, "systemd", name+".service"), unitDir[t.Family]+"/"+name+".service", 0o644, files.TypeFile),
		file(script, initDir[t.Family]+"/"+name, 0o755, initType),
	}, nil
}

func mustExist(path, pkg, what, arch string) error {
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			hint := ""
			if cmd, ok := strings.CutPrefix(what, "command "); ok {
				hint = fmt.Sprintf(": is cmd/%s on this tree? Build the others with PACKAGES='...'", cmd)
			}
			return fmt.Errorf("%s: %s for linux/%s: %s missing%s: %w", pkg, what, arch, path, hint, ErrMissingBinary)
		}
		return err
	}
	return nil
}

func file(src, dst string, mode fs.FileMode, typ string) *files.Content {
	return &files.Content{Source: src, Destination: dst, Type: typ,
		FileInfo: &files.ContentFileInfo{Mode: mode, Owner: "root", Group: "root"}}
}

func link(linkPath, target string) *files.Content {
	return &files.Content{Source: target, Destination: linkPath, Type: files.TypeSymlink,
		FileInfo: &files.ContentFileInfo{Mode: 0o777, Owner: "root", Group: "root"}}
}

// dir is a directory entry. An rpm names its owner (rpm resolves it at
// install, after the shared package's %pre made the account); a deb's
// directories are root's in the archive and chowned by the postinst.
func dir(d Dir, f Family) *files.Content {
	owner := "root"
	if f == RPM && d.Owner != "" {
		owner = d.Owner
	}
	return &files.Content{Destination: d.Path, Type: files.TypeDir,
		FileInfo: &files.ContentFileInfo{Mode: d.Mode, Owner: owner, Group: owner}}
}

// wrap breaks text into lines of at most width characters at spaces.
func wrap(text string, width int) string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(text) {
		if line != "" && len(line)+1+len(w) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	return strings.Join(append(lines, line), "\n")
}
