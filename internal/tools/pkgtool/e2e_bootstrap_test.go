package main

import (
	"strings"
	"testing"
	"time"
)

// TestBootstrap runs the published bootstrap-salt.sh in a host against
// the repository served on the cluster's bridge, as an operator runs it
// (curl … | sh -s -- flags): it installs the master and the minion, writes
// the minion's master and id, enables and starts both, and once the key
// is accepted `salt boot1 test.ping` answers. A second run changes
// nothing and keeps the minion answering; refused options say so.
func TestBootstrap(t *testing.T) {
	fx := packages(t)
	repo := makeTestRepo(t, fx)
	c, sh := packageHost(t, fx)
	url := serveRepo(t, c.ControllerIP(), repo)
	sh("rm -f /etc/apt/sources.list /etc/apt/sources.list.d/*")
	boot := "curl -fsSL " + url + "/" + BootstrapScript + " | sh -s -- "

	out := sh(boot + "-P -M -A 127.0.0.1 -i boot1 -R " + url + " stable " + newVersion + " 2>&1")
	for _, w := range []string{"pip is never needed", "wrote /etc/salt/minion.d/99-master-address.conf",
		"Starting salt-master: OK", "Starting salt-minion: OK", "Salt installed (Brine)"} {
		if !strings.Contains(out, w) {
			t.Errorf("bootstrap output lacks %q:\n%s", w, out)
		}
	}
	got := sh(`dpkg-query -W -f '${Package} ${Version}\n' salt-common salt-master salt-minion
		cat /etc/salt/minion.d/99-master-address.conf /etc/salt/minion.d/99-minion-id.conf
		ls /etc/rc2.d | grep salt- | sort`)
	v := Epoch + ":" + newVersion
	want := "salt-common " + v + "\nsalt-master " + v + "\nsalt-minion " + v +
		"\nmaster: 127.0.0.1\nid: boot1\nS01salt-master\nS01salt-minion"
	if got != want {
		t.Errorf("after the bootstrap:\n%s\nwant\n%s", got, want)
	}
	acceptKey(t, sh, "boot1")
	waitPing(t, sh, "boot1")

	sh(boot + "-M -A 127.0.0.1 -i boot1 -R " + url)
	waitPing(t, sh, "boot1")

	for flag, msg := range map[string]string{"-L": "no salt-cloud package", "-Z": "invalid option: -Z",
		"-R " + url + " git v3006": "Brine installs from packages"} {
		if out := sh(boot + flag + " 2>&1 && echo ACCEPTED || true"); !strings.Contains(out, msg) || strings.Contains(out, "ACCEPTED") {
			t.Errorf("bootstrap %s: %q, want a refusal with %q", flag, out, msg)
		}
	}
}

// acceptKey waits for id's key to be pending and accepts it.
func acceptKey(t *testing.T, sh func(string) string, id string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if strings.Contains(sh("salt-key -l un"), id) {
			sh("salt-key -y -a " + id)
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Fatalf("%s never asked to be accepted:\n%s", id, sh("salt-key -L; tail -n 20 /var/log/salt/minion"))
}
