package promote

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/brinesalt/brine/internal/httpget"
	"github.com/brinesalt/brine/internal/ordered"
)

// Package mode: with repo= (a Brine package repository, see `make repo`)
// the host installs the salt-minion package from it instead of the thin
// binary, as bootstrap-salt.sh -R does, and the minion runs from the
// package's own init script or unit: upgrades then come with the
// system's package manager. The settings go in a minion.d drop-in, so
// the package's /etc/salt/minion stays the unmodified conffile.
const (
	// DropIn is the minion settings file in package mode.
	DropIn     = "/etc/salt/minion.d/99-minion-bootstrap.conf"
	packageBin = "/usr/bin/salt-minion"

	aptKeyring = "/etc/apt/keyrings/brine-archive-keyring.gpg"
	aptList    = "/etc/apt/sources.list.d/brine.list"
	yumKey     = "/etc/pki/rpm-gpg/RPM-GPG-KEY-brine"
	yumRepo    = "/etc/yum.repos.d/brine.repo"
)

// family is the host's package manager: "apt-get", "dnf" or "yum".
func family() (string, error) {
	for _, m := range []string{"apt-get", "dnf", "yum"} {
		if _, err := exec.LookPath(m); err == nil {
			return m, nil
		}
	}
	return "", fmt.Errorf("no apt-get, dnf or yum on this host to install packages with")
}

// repoFiles are the repository's key and source definition for manager
// m: the key as the repository publishes it (fetched from it, so over
// plain HTTP it is trusted as first served), then the list or .repo file.
func repoFiles(m, repo string) (keyURL, keyPath, srcPath, src string) {
	if m == "apt-get" {
		return repo + "/brine-archive-keyring.gpg", aptKeyring, aptList,
			"deb [signed-by=" + aptKeyring + "] " + repo + " stable main\n"
	}
	return repo + "/RPM-GPG-KEY-brine", yumKey, yumRepo, "[brine]\nname=Brine\nbaseurl=" + repo + "/rpm\n" +
		"enabled=1\ngpgcheck=0\nrepo_gpgcheck=1\ngpgkey=file://" + yumKey + "\n"
}

// installPackage configures the repository and installs salt-minion
// from it; changed reports a new or different package.
func installPackage(ctx context.Context, l layout) (steps []Step, changed, ok bool) {
	m, err := family()
	if err != nil {
		return []Step{{ID: "repository", Name: l.Repo, Comment: err.Error()}}, false, false
	}
	s := Step{ID: "repository", Name: l.Repo}
	keyURL, keyPath, srcPath, src := repoFiles(m, strings.TrimRight(l.Repo, "/"))
	resp, err := (&httpget.Client{}).Get(ctx, keyURL)
	if err == nil && resp.StatusCode != 200 {
		err = fmt.Errorf("%d %s", resp.StatusCode, resp.Status)
	}
	var kch, sch bool
	if err == nil {
		kch, err = writeFile(l.path(keyPath), resp.Body, 0o644)
	}
	if err == nil {
		sch, err = writeFile(l.path(srcPath), []byte(src), 0o644)
	}
	if err != nil {
		s.Comment = fmt.Sprintf("fetch the repository key %s: %s", keyURL, err.Error())
		return []Step{s}, false, false
	}
	s.Result, s.Comment = true, describe(srcPath, kch || sch, nil)
	if kch || sch {
		s.Changes = ordered.FromPairs(srcPath, "updated")
	}
	steps = append(steps, s)
	before := packageVersion(ctx, m)
	out, err := sh(ctx, installCommand(m))
	after := packageVersion(ctx, m)
	p := ran("package", "salt-minion", "installed salt-minion "+after, before != after, out, err)
	if err == nil && before == after {
		p.Comment = "salt-minion " + after + " is already installed"
	}
	return append(steps, p), before != after, err == nil
}

func installCommand(m string) string {
	if m == "apt-get" {
		return "export DEBIAN_FRONTEND=noninteractive; apt-get update -q && " +
			"apt-get install -y -q -o Dpkg::Options::=--force-confold salt-minion"
	}
	return m + " install -y salt-minion"
}

// packageVersion is the installed salt-minion's version, "" for none.
func packageVersion(ctx context.Context, m string) string {
	q := "rpm -q --qf '%{EPOCH}:%{VERSION}-%{RELEASE}' salt-minion"
	if m == "apt-get" {
		q = "dpkg-query -W -f '${Version}' salt-minion"
	}
	out, err := sh(ctx, q+" 2>/dev/null")
	if err != nil {
		return ""
	}
	return out
}

// retireThinMinion stops and removes a minion an earlier minion.bootstrap
// installed from the thin binary (its unit, its init script, the binary),
// so the package's own take their places.
func retireThinMinion(ctx context.Context, l layout) []Step {
	script, err := os.ReadFile(l.path(initScript))
	ours := err == nil && strings.Contains(string(script), "DAEMON="+DefaultBin+"\n")
	_, binErr := os.Stat(l.path(DefaultBin))
	if !ours && binErr != nil {
		return nil
	}
	var out string
	if ours {
		out, err = sh(ctx, initScript+" stop")
	} else if _, e := os.Stat(l.path(unitPath)); e == nil {
		out, err = sh(ctx, "systemctl disable --now salt-minion; rm -f "+unitPath+" && systemctl daemon-reload")
	}
	if err == nil {
		for _, p := range []string{initScript, unitPath, DefaultBin} {
			if ours || p != initScript {
				if e := os.Remove(l.path(p)); e != nil && !os.IsNotExist(e) {
					err = e
				}
			}
		}
	}
	return []Step{ran("thin minion", DefaultBin, "replaced by the salt-minion package", true, out, err)}
}
