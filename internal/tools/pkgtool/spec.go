package main

import (
	"io/fs"
)

// Family is a packaging family: Debian's .deb or Red Hat's .rpm.
type Family string

// The families `make packages` builds for.
const (
	Deb Family = "deb"
	RPM Family = "rpm"
)

// Families are every family, in build order.
var Families = []Family{Deb, RPM}

// Paths shared by the families, Salt 3006's (pkg/debian/*.links,
// pkg/rpm/salt.spec): the commands live in the onedir directory and
// /usr/bin links to them, and the thin binaries salt-ssh sends live beside
// salt-ssh there (salt-ssh looks for them beside its resolved executable).
const (
	OptDir = "/opt/saltstack/salt"
	BinDir = "/usr/bin"
)

// unitDir and initDir are where each family keeps systemd units and SysV
// scripts.
var (
	unitDir = map[Family]string{Deb: "/lib/systemd/system", RPM: "/usr/lib/systemd/system"}
	initDir = map[Family]string{Deb: "/etc/init.d", RPM: "/etc/rc.d/init.d"}
	// configMode is the mode of /etc/salt/{master,minion,roster}: Salt's
	// deb ships them 0644 (dh_fixperms), its rpm installs them 0640.
	configMode = map[Family]fs.FileMode{Deb: 0o644, RPM: 0o640}
)

// Spec is one package of the split, as Salt 3006 splits its packages.
type Spec struct {
	// Name is the package's name; Names overrides it per family (Salt's
	// shared package is salt-common on Debian and salt on Red Hat).
	Name    string
	Names   map[Family]string
	Summary string
	// Description is the long description, one paragraph.
	Description string
	// Commands go to OptDir with a link in BinDir; Only lists commands
	// that only one family puts in this package (salt-call: salt-common
	// on Debian, salt-minion on Red Hat).
	Commands []string
	Only     map[Family][]string
	// Thin carries the thin binaries of every target architecture.
	Thin bool
	// Configs are files under /etc/salt from packaging/conf, never
	// overwritten by an upgrade.
	Configs []string
	// Dirs are directories the package owns, with Salt's modes; Owner
	// "salt" directories are chowned by the maintainer scripts (Salt's
	// postinst and %posttrans do the same), so unpacking never depends on
	// the account existing yet.
	Dirs []Dir
	// Logrotate installs packaging/logrotate/salt-common.
	Logrotate bool
	// Daemon, for a package with a service: unit, SysV script, scripts.
	Daemon *Daemon
	// Depends are the packages this one needs, per family; "=" means
	// "the same version of".
	Depends map[Family][]string
	// SaltObsoletes are Salt's own obsolete names of this package, which
	// Salt's rpm obsoletes too (salt3-master < 3006, salt3006-master).
	SaltObsoletes []string
	// BreaksCloud: Salt's salt-cloud needs Salt's own salt-master, which
	// this package replaces; Brine has no salt-cloud.
	BreaksCloud bool
}

// Dir is a directory a package owns.
type Dir struct {
	Path  string
	Mode  fs.FileMode
	Owner string // "" is root
}

// Daemon describes a package's service.
type Daemon struct {
	// Description is the service's one-line description.
	Description string
	// Chkconfig is the SysV script's "chkconfig:" line (runlevels, start
	// and stop priorities), Salt's pkg/rpm/salt-* values.
	Chkconfig   string
	ShouldStart string // extra Required-Start facilities
	// LogFile receives the daemon's stderr under SysV.
	LogFile string
	// Logs are created 0640 on install, as Salt's postinst does.
	Logs []string
	// Owner and Chown: Salt's scripts chown these to the daemon's user.
	Owner string
	Chown []string
	// Purge is what a purge removes (Salt's pkg/common/salt.postrm).
	Purge []string
}

// PackageName returns the spec's package name in family f.
func (s Spec) PackageName(f Family) string {
	if n, ok := s.Names[f]; ok {
		return n
	}
	return s.Name
}

// CommandsFor returns the commands the package carries in family f.
func (s Spec) CommandsFor(f Family) []string {
	return append(append([]string(nil), s.Commands...), s.Only[f]...)
}

const masterCache = "/var/cache/salt/master"

// Specs is the split: Salt 3006's packages, salt-cloud left out (Brine
// has no salt-cloud; its packages break Salt's, whose salt-cloud needs
// Salt's own salt-master), and salt-proxy and spm left out of salt-minion
// and salt-master for the same reason.
var Specs = []Spec{
	{
		Name: "salt-common", Names: map[Family]string{RPM: "salt"},
		Summary: "Brine: what every Salt package shares, and the thin binaries salt-ssh sends",
		Description: "Brine is a Go implementation of SaltStack. This package holds what the " +
			"salt-master, salt-minion and salt-ssh packages share: /etc/salt, the log and cache " +
			"directories, log rotation, and the static thin binaries salt-ssh sends to its targets.",
		Only:      map[Family][]string{Deb: {"salt-call"}},
		Thin:      true,
		Logrotate: true,
		Dirs: []Dir{{Path: "/etc/salt", Mode: 0o755}, {Path: "/etc/salt/pki", Mode: 0o755},
			{Path: "/var/cache/salt", Mode: 0o755}, {Path: "/var/log/salt", Mode: 0o755},
			{Path: "/var/run/salt", Mode: 0o755}, {Path: OptDir, Mode: 0o755}},
		Depends:       map[Family][]string{RPM: {"/usr/sbin/useradd", "/usr/sbin/groupadd"}},
		SaltObsoletes: []string{"salt3 < 3006", "salt3006"},
	},
	{
		Name:    "salt-master",
		Summary: "Brine: the Salt master and its command-line clients",
		Description: "Brine is a Go implementation of SaltStack. This package provides the " +
			"salt-master daemon, to which minions connect, and salt, salt-key, salt-run and salt-cp.",
		Commands: []string{"salt-master", "salt", "salt-cp", "salt-key", "salt-run"},
		Configs:  []string{"master"},
		Dirs:     masterDirs(),
		// salt-master links libpam (pam eauth, internal/eauth/pam) where
		// it is built with cgo; nfpm computes no library dependencies.
		Depends: map[Family][]string{Deb: {"libpam0g"}, RPM: {"pam"}},
		Daemon: &Daemon{
			Description: "The Salt Master Server", Chkconfig: "345 96 05",
			LogFile: "/var/log/salt/master", Logs: []string{"/var/log/salt/master", "/var/log/salt/key"},
			Owner: "salt", Chown: []string{"/etc/salt/pki/master", "/etc/salt/master.d", "/var/log/salt/master",
				"/var/log/salt/key", masterCache, "/var/run/salt/master"},
			Purge: []string{"/etc/salt/pki/master", masterCache, "/var/log/salt/master", "/var/run/salt/master"},
		},
		SaltObsoletes: []string{"salt3-master < 3006", "salt3006-master"},
		BreaksCloud:   true,
	},
	{
		Name:    "salt-minion",
		Summary: "Brine: the Salt minion",
		Description: "Brine is a Go implementation of SaltStack. This package provides the " +
			"salt-minion daemon, the agent that runs the master's jobs and returns their results.",
		Commands: []string{"salt-minion"},
		Only:     map[Family][]string{RPM: {"salt-call"}},
		Configs:  []string{"minion"},
		Dirs: []Dir{{Path: "/etc/salt/minion.d", Mode: 0o755}, {Path: "/etc/salt/pki/minion", Mode: 0o700},
			{Path: "/var/cache/salt/minion", Mode: 0o750}},
		Daemon: &Daemon{
			Description: "The Salt Minion", Chkconfig: "345 97 04",
			LogFile: "/var/log/salt/minion", Logs: []string{"/var/log/salt/minion"}, Owner: "root",
			Purge: []string{"/etc/salt/pki/minion", "/var/cache/salt/minion", "/var/log/salt/minion", "/var/run/salt/minion"},
		},
		SaltObsoletes: []string{"salt3-minion < 3006", "salt3006-minion"},
	},
	{
		Name:    "salt-ssh",
		Summary: "Brine: salt-ssh, Salt without an agent",
		Description: "Brine is a Go implementation of SaltStack. This package provides salt-ssh, " +
			"which runs Salt's execution modules and states on hosts over SSH, without a minion.",
		Commands:      []string{"salt-ssh"},
		Configs:       []string{"roster"},
		Depends:       map[Family][]string{Deb: {"openssh-client"}, RPM: {"openssh-clients"}},
		SaltObsoletes: []string{"salt3-ssh < 3006", "salt3006-ssh"},
	},
	{
		Name:    "salt-syndic",
		Summary: "Brine: the Salt syndic, a master of masters",
		Description: "Brine is a Go implementation of SaltStack. This package provides the " +
			"salt-syndic daemon, which lets a higher-level master control this master's minions.",
		Commands: []string{"salt-syndic"},
		Daemon: &Daemon{
			Description: "The Salt Syndic", Chkconfig: "- 99 99",
			LogFile: "/var/log/salt/syndic", Logs: []string{"/var/log/salt/syndic"},
			Owner: "salt", Chown: []string{"/var/log/salt/syndic"},
			Purge: []string{"/etc/salt/pki/syndic", "/var/cache/salt/syndic", "/var/log/salt/syndic", "/var/run/salt/syndic"},
		},
		SaltObsoletes: []string{"salt3-syndic < 3006", "salt3006-syndic"},
	},
	{
		Name:    "salt-api",
		Summary: "Brine: salt-api, Salt's REST interface",
		Description: "Brine is a Go implementation of SaltStack. This package provides the " +
			"salt-api daemon, a REST interface to the Salt master.",
		Commands: []string{"salt-api"},
		Daemon: &Daemon{
			Description: "The Salt API", Chkconfig: "345 99 99", ShouldStart: " $named $time",
			LogFile: "/var/log/salt/api", Logs: []string{"/var/log/salt/api"},
			Owner: "salt", Chown: []string{"/var/log/salt/api"},
			Purge: []string{"/var/log/salt/api"},
		},
		SaltObsoletes: []string{"salt3-api < 3006", "salt3006-api"},
	},
}

// saltDirs are directories under prefix owned by salt, 0750, as
// pkg/rpm/salt.spec's %dir %attr(0750, salt, salt) lines.
func saltDirs(prefix string, names ...string) []Dir {
	out := make([]Dir, len(names))
	for i, n := range names {
		out[i] = Dir{Path: prefix + n, Mode: 0o750, Owner: "salt"}
	}
	return out
}

// masterDirs are the master's configuration, key, cache and socket
// directories: salt's and 0750, as pkg/rpm/salt.spec has them, but
// master.d (0755, root's until the postinst chowns it as Salt's does).
func masterDirs() []Dir {
	dirs := []Dir{{Path: "/etc/salt/master.d", Mode: 0o755}}
	dirs = append(dirs, saltDirs("/etc/salt/pki/", "master")...)
	dirs = append(dirs, saltDirs("/etc/salt/pki/master/", "minions", "minions_autosign", "minions_denied",
		"minions_pre", "minions_rejected")...)
	dirs = append(dirs, saltDirs("/var/cache/salt/", "master")...)
	dirs = append(dirs, saltDirs(masterCache+"/", "jobs", "proc", "queues", "roots", "syndics", "tokens")...)
	return append(dirs, saltDirs("/var/run/salt/", "master")...)
}

// dependsOn names, for each package, the package whose exact version it
// needs: the shared package, or for syndic and api the master (Salt's
// pkg/debian/control and salt.spec).
var dependsOn = map[string]string{
	"salt-master": "salt-common", "salt-minion": "salt-common", "salt-ssh": "salt-common",
	"salt-syndic": "salt-master", "salt-api": "salt-master",
}

// SpecByName returns the spec named name (its Debian name).
func SpecByName(name string) (Spec, bool) {
	for _, s := range Specs {
		if s.Name == name {
			return s, true
		}
	}
	return Spec{}, false
}
