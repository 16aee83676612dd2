package main

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/testsupport/testhosts"
)

// packageHost starts a one-host cluster whose host has a private /usr,
// /var/lib, /var/cache, /var/log, /opt and /run, so dpkg and apt-get
// install there without touching this machine, and copies the fixture's
// two builds into its /tmp/old and /tmp/new.
func packageHost(t *testing.T, fx fixture) (*testhosts.Cluster, func(string) string) {
	t.Helper()
	need(t, "dpkg-deb")
	testhosts.RequireNetns(t, "package installs in a host")
	c := testhosts.New(t, 1, testhosts.WithDefaults(testhosts.HostOptions{PrivateSystem: true}))
	tmp, err := c.HostPath("host1", "/tmp")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []struct{ from, to string }{{fx.Old, "old"}, {fx.New, "new"}} {
		debs, _ := filepath.Glob(filepath.Join(b.from, "deb", "*.deb"))
		for _, d := range debs {
			if err := copyFile(d, filepath.Join(tmp, b.to, filepath.Base(d))); err != nil {
				t.Fatal(err)
			}
		}
	}
	sh := func(script string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
		defer cancel()
		out, err := c.Exec(ctx, "host1", "export DEBIAN_FRONTEND=noninteractive; set -e; "+script)
		if err != nil {
			var ee *testhosts.ExitError
			if errors.As(err, &ee) {
				t.Fatalf("on host1: %s\n%s\nexit %d: %s", script, out, ee.Code, ee.Stderr)
			}
			t.Fatalf("on host1: %s: %v", script, err)
		}
		return strings.TrimSpace(string(out))
	}
	return c, sh
}

// debs is the dpkg -i argument of a build's packages.
const debs = "salt-common_*.deb salt-master_*.deb salt-minion_*.deb salt-ssh_*.deb"

// TestDebLifecycle installs the .debs in a host, starts the master and
// minion through their SysV scripts and has `salt test.ping` answer;
// then upgrades, downgrades, removes and purges, checking at each step
// what Salt's packages promise: the salt account and owners, services
// registered but not enabled, conffiles and keys kept across upgrades,
// a running minion restarted with its identity, pki kept on removal and
// gone on purge.
func TestDebLifecycle(t *testing.T) {
	fx := packages(t)
	_, sh := packageHost(t, fx)
	// This machine forbids maintainer scripts to start services (a
	// policy-rc.d that exits 101, as container images have); a real host
	// has none. The downgrade below puts one back.
	sh("rm -f /usr/sbin/policy-rc.d")

	sh("cd /tmp/old && dpkg -i " + debs)
	checkInstalled(t, sh, Epoch+":"+oldVersion)
	// The maintainer scripts are idempotent: configuring again, as
	// dpkg-reconfigure or a retried install does, changes nothing.
	sh(`for p in salt-master salt-minion; do /var/lib/dpkg/info/$p.postinst configure ''; done
		/var/lib/dpkg/info/salt-common.preinst upgrade ` + Epoch + ":" + oldVersion)
	checkInstalled(t, sh, Epoch+":"+oldVersion)
	// A site's own settings; the shipped files stay as they are but for
	// one edit to a conffile, which every upgrade must keep.
	sh(`printf 'interface: 127.0.0.1\nauto_accept: True\n' > /etc/salt/master.d/site.conf
		printf 'master: 127.0.0.1\nid: pkgminion\n' > /etc/salt/minion.d/site.conf
		echo '# edited by the site' >> /etc/salt/minion`)
	sh("/etc/init.d/salt-master start && /etc/init.d/salt-minion start")
	if got := sh("/etc/init.d/salt-minion status"); !strings.HasPrefix(got, "salt-minion is running (pid ") {
		t.Errorf("status after start: %q", got)
	}
	waitPing(t, sh, "pkgminion")
	keys := sh("md5sum /etc/salt/pki/minion/minion.pem /etc/salt/pki/master/minions/pkgminion")
	pid := sh("cat /var/run/salt-minion.pid")
	jobs := sh("find /var/cache/salt/master/jobs -type f | wc -l")

	sh("cd /tmp/new && dpkg -i " + debs)
	checkInstalled(t, sh, Epoch+":"+newVersion)
	if got := sh("md5sum /etc/salt/pki/minion/minion.pem /etc/salt/pki/master/minions/pkgminion"); got != keys {
		t.Errorf("keys changed across the upgrade:\n%s\nwas\n%s", got, keys)
	}
	if got := sh("tail -n 1 /etc/salt/minion"); got != "# edited by the site" {
		t.Errorf("the upgrade replaced the edited /etc/salt/minion (last line %q)", got)
	}
	if got := sh("find /var/cache/salt/master/jobs -type f | wc -l"); got < jobs || got == "0" {
		t.Errorf("job cache: %s files after the upgrade, %s before", got, jobs)
	}
	if got := sh("cat /var/run/salt-minion.pid"); got == pid {
		t.Errorf("the running minion was not restarted by the upgrade (pid %s)", got)
	}
	waitPing(t, sh, "pkgminion")

	// Downgrade under a policy that forbids restarts: the minion keeps
	// running, untouched, and the postinst says why.
	pid = sh("cat /var/run/salt-minion.pid")
	sh(`printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d`)
	if out := sh("cd /tmp/old && dpkg -i " + debs + " 2>&1"); !strings.Contains(out, "salt-minion: policy-rc.d forbids the restart") {
		t.Errorf("downgrade under policy-rc.d:\n%s", out)
	}
	sh("rm /usr/sbin/policy-rc.d")
	checkInstalled(t, sh, Epoch+":"+oldVersion)
	if got := sh("cat /var/run/salt-minion.pid"); got != pid {
		t.Errorf("policy-rc.d forbade it, but the minion was restarted (pid %s, was %s)", got, pid)
	}
	waitPing(t, sh, "pkgminion")

	sh("dpkg -r salt-minion")
	if got := sh("/etc/init.d/salt-minion status || echo stopped $?"); got != "salt-minion is not installed\nstopped 3" {
		t.Errorf("status after removal: %q", got)
	}
	sh("test ! -e /var/run/salt-minion.pid && test -s /etc/salt/pki/minion/minion.pem && test -e /etc/salt/minion && test -x /etc/init.d/salt-minion")
	sh("/etc/init.d/salt-master stop")
	sh("dpkg -P salt-minion salt-master salt-ssh salt-common")
	sh(`for p in /etc/salt/pki/minion /etc/salt/pki/master /etc/salt/minion /etc/salt/master /var/cache/salt /var/log/salt /etc/init.d/salt-minion /opt/saltstack/salt/salt-minion /usr/bin/salt; do
			if [ -e "$p" ] || [ -L "$p" ]; then echo "$p survived the purge" >&2; exit 1; fi
		done
		if ls /etc/rc?.d/*salt* 2>/dev/null; then echo "rc links survived the purge" >&2; exit 1; fi
		getent passwd salt >/dev/null`)
}

// checkInstalled checks the installed version and what the install
// promises: the salt account, the master's directories salt's and the
// minion's root's, the SysV scripts registered but disabled.
func checkInstalled(t *testing.T, sh func(string) string, version string) {
	t.Helper()
	for _, p := range []string{"salt-common", "salt-master", "salt-minion", "salt-ssh"} {
		if got := sh("dpkg-query -W -f '${Version} ${db:Status-Status}' " + p); got != version+" installed" {
			t.Errorf("%s: %q, want %q installed", p, got, version)
		}
	}
	got := sh(`getent passwd salt | cut -d: -f1,6,7
		stat -c '%U:%G %a %n' /etc/salt/pki/master /etc/salt/pki/master/minions /var/cache/salt/master /var/cache/salt/master/jobs /var/log/salt/master /var/log/salt/key /etc/salt/pki/minion /var/cache/salt/minion /var/log/salt/minion
		readlink /usr/bin/salt-minion
		ls /etc/rc2.d /etc/rc0.d | grep salt- | sort`)
	want := `salt:/opt/saltstack/salt:/usr/sbin/nologin
salt:salt 750 /etc/salt/pki/master
salt:salt 750 /etc/salt/pki/master/minions
salt:salt 750 /var/cache/salt/master
salt:salt 750 /var/cache/salt/master/jobs
salt:salt 640 /var/log/salt/master
salt:salt 640 /var/log/salt/key
root:root 700 /etc/salt/pki/minion
root:root 750 /var/cache/salt/minion
root:root 640 /var/log/salt/minion
/opt/saltstack/salt/salt-minion
K01salt-master
K01salt-master
K01salt-minion
K01salt-minion`
	if got != want {
		t.Errorf("after installing %s:\n%s\nwant\n%s", version, got, want)
	}
}

// waitPing waits until `salt <id> test.ping` answers True.
func waitPing(t *testing.T, sh func(string) string, id string) {
	t.Helper()
	var last string
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		last = sh("salt " + id + " test.ping --out json --timeout 5 2>&1 || true")
		var ret map[string]any
		if json.Unmarshal([]byte(last), &ret) == nil && ret[id] == true {
			return
		}
		time.Sleep(time.Second)
	}
	t.Fatalf("salt %s test.ping never answered True; last:\n%s\nlogs:\n%s", id, last,
		sh("tail -n 20 /var/log/salt/minion /var/log/salt/master 2>&1 || true"))
}
