package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brinesalt/brine/internal/testsupport/testhosts"
)

// rpmRootSetup builds, in a private mount namespace, a root in $R for
// `rpm --root`: this machine's /usr through an overlay (so what the
// packages put in /usr lands in $T/usr-up), the merged-/usr links, /dev,
// and copies of the account files. A stand-in chkconfig records its
// calls in /var/log/chkconfig.calls: Debian has no chkconfig.
const rpmRootSetup = `set -e
mkdir -p "$T/usr-up/sbin" "$T/usr-work" "$R/usr" "$R/etc" "$R/dev" "$R/tmp" "$R/var/log" "$R/run"
printf '#!/bin/sh\necho "$*" >> /var/log/chkconfig.calls\n' > "$T/usr-up/sbin/chkconfig"
chmod 755 "$T/usr-up/sbin/chkconfig"
mount -t overlay rpmroot -o "lowerdir=/usr,upperdir=$T/usr-up,workdir=$T/usr-work" "$R/usr"
for d in bin sbin lib lib64; do [ -L "/$d" ] && ln -sfn "usr/$d" "$R/$d"; done
mount --bind /dev "$R/dev"
for f in passwd group shadow gshadow login.defs nsswitch.conf; do [ -e "/etc/$f" ] && cp -p "/etc/$f" "$R/etc/"; done
ln -sfn ../run "$R/var/run"
rpm --root "$R" --initdb
`

// TestRPMRoot installs, upgrades and erases the rpms with `rpm --root`
// in a temporary root, running their scriptlets there. What runs is
// rpm's own transaction (Debian's rpm 4.18) with every scriptlet under
// Debian's sh, getent, groupadd, useradd, chown and install; what cannot
// run without a Red Hat userland: yum or dnf resolving the dependencies
// (--nodeps: the root's rpm database has no /bin/sh or openssh-clients),
// Red Hat's chkconfig (a stand-in records the calls) and systemd (the
// root has none, so the scriptlets take their SysV branch).
func TestRPMRoot(t *testing.T) {
	need(t, "rpm", "unshare")
	testhosts.RequireRoot(t, "mounts in a private mount namespace")
	fx := packages(t)
	tmp := t.TempDir()
	root := filepath.Join(tmp, "root")
	rpms := func(dir string) string {
		var names []string
		for _, n := range []string{"salt", "salt-master", "salt-minion", "salt-ssh"} {
			names = append(names, pkgFile(t, dir, RPM, n))
		}
		return strings.Join(names, " ")
	}
	script := rpmRootSetup + `
rpm --root "$R" -i --nodeps ` + rpms(fx.Old) + ` >>"$T/rpm.log" 2>&1
echo '# edited by the site' >> "$R/etc/salt/minion"
echo key > "$R/etc/salt/pki/minion/minion.pem"
echo "== installed"
rpm --root "$R" -q --qf '%{NAME} %{EPOCH}:%{VERSION}-%{RELEASE}\n' salt salt-master salt-minion salt-ssh
grep '^salt:' "$R/etc/passwd" | cut -d: -f1,6,7
chroot "$R" stat -c '%U:%G %a %n' /etc/salt/pki/master /var/cache/salt/master/jobs /var/log/salt/master /var/log/salt/minion /etc/salt/master
readlink "$T/usr-up/bin/salt-master"
cat "$R/var/log/chkconfig.calls"
rpm --root "$R" -U --nodeps ` + rpms(fx.New) + ` >>"$T/rpm.log" 2>&1
echo "== upgraded"
rpm --root "$R" -q --qf '%{NAME} %{EPOCH}:%{VERSION}-%{RELEASE}\n' salt salt-master salt-minion salt-ssh
tail -n 1 "$R/etc/salt/minion"
ls "$R/etc/salt" | grep -c rpmnew || true
cat "$R/var/log/chkconfig.calls"
rpm --root "$R" -e --nodeps salt-minion >>"$T/rpm.log" 2>&1
echo "== erased"
cat "$R/etc/salt/pki/minion/minion.pem"
tail -n 1 "$R/etc/salt/minion.rpmsave"
cat "$R/var/log/chkconfig.calls"
`
	cmd := exec.Command("unshare", "--mount", "--propagation", "private", "sh", "-c", script)
	cmd.Env = append(os.Environ(), "T="+tmp, "R="+root)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(tmp, "rpm.log"))
		t.Fatalf("rpm --root: %v\n%s%s\n%s", err, out, stderr.String(), log)
	}
	v1, v2 := Epoch+":"+oldVersion+"-"+rpmRelease, Epoch+":"+newVersion+"-"+rpmRelease
	want := `== installed
salt ` + v1 + `
salt-master ` + v1 + `
salt-minion ` + v1 + `
salt-ssh ` + v1 + `
salt:/opt/saltstack/salt:/sbin/nologin
salt:salt 750 /etc/salt/pki/master
salt:salt 750 /var/cache/salt/master/jobs
salt:salt 640 /var/log/salt/master
root:root 640 /var/log/salt/minion
root:root 640 /etc/salt/master
/opt/saltstack/salt/salt-master
--add salt-master
--add salt-minion
== upgraded
salt ` + v2 + `
salt-master ` + v2 + `
salt-minion ` + v2 + `
salt-ssh ` + v2 + `
# edited by the site
0
--add salt-master
--add salt-minion
== erased
key
# edited by the site
--add salt-master
--add salt-minion
--del salt-minion
`
	log, _ := os.ReadFile(filepath.Join(tmp, "rpm.log"))
	if got := string(out); got != want {
		t.Errorf("rpm --root:\n%s\nwant\n%s\nrpm's own output:\n%s", got, want, log)
	}
	// The minion's %preun stopped it (the SysV branch) and rpm kept the
	// edited config, as an rpm removal does.
	for _, w := range []string{"salt-minion is not running", "/etc/salt/minion saved as /etc/salt/minion.rpmsave"} {
		if !strings.Contains(string(log), w) {
			t.Errorf("rpm's output lacks %q:\n%s", w, log)
		}
	}
}
