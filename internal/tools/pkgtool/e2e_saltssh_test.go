package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestSaltSSHBootstrapFromRepo promotes a host with salt-ssh's
// minion.bootstrap repo=<url>: the host installs salt-minion from the
// repository served on the bridge, runs it from the package's SysV
// script with the settings in a minion.d drop-in (the package's
// /etc/salt/minion stays unmodified), and the controller's master sees
// it answer test.ping; a second run changes nothing.
func TestSaltSSHBootstrapFromRepo(t *testing.T) {
	fx := packages(t)
	repo := makeTestRepo(t, fx)
	c, sh := packageHost(t, fx)
	url := serveRepo(t, c.ControllerIP(), repo)
	sh("rm -f /etc/apt/sources.list /etc/apt/sources.list.d/*")
	bin := filepath.Join(fx.Bin, "linux-"+runtime.GOARCH)
	dir := t.TempDir()
	ip := c.ControllerIP()
	conf := fmt.Sprintf("interface: %s\npublish_port: %d\nret_port: %d\npki_dir: %s/pki\ncachedir: %s/cache\n"+
		"sock_dir: %s/sock\nknown_hosts_file: %s\nroster_file: %s\nssh_log_file: %s/ssh.log\ntimeout: 5\n",
		ip, freePort(t, ip), freePort(t, ip), dir, dir, dir, c.KnownHostsPath(), c.RosterPath(), dir)
	if err := os.WriteFile(filepath.Join(dir, "master"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	startMaster(t, bin, dir)

	saltSSH := func() map[string]any {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, filepath.Join(bin, "salt-ssh"), "-c", dir, "--out", "json", "--static",
			"host1", "minion.bootstrap", "master="+ip, "repo="+url)
		cmd.Env = append(os.Environ(), "BRINE_THIN_DIR="+fx.Bin)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("salt-ssh minion.bootstrap: %v\n%s\n%s", err, stdout.String(), stderr.String())
		}
		var got map[string]any
		if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
			t.Fatalf("salt-ssh output: %v\n%s", err, stdout.String())
		}
		return got
	}
	first := saltSSH()
	if s := fmt.Sprint(first["host1"]); !strings.Contains(s, "installed salt-minion "+Epoch+":"+newVersion) ||
		!strings.Contains(s, "answers test.ping") {
		t.Errorf("first minion.bootstrap:\n%s", s)
	}
	got := sh(`dpkg-query -W -f '${Version}' salt-minion; echo
		dpkg --verify salt-minion salt-common && echo verified
		grep -c '^master: ` + ip + `$' ` + "/etc/salt/minion.d/99-minion-bootstrap.conf" + `
		ls /etc/rc2.d | grep salt-minion
		/etc/init.d/salt-minion status`)
	if !strings.HasPrefix(got, Epoch+":"+newVersion+"\nverified\n1\nS01salt-minion\nsalt-minion is running (pid ") {
		t.Errorf("on host1 after minion.bootstrap repo=:\n%s", got)
	}
	second := saltSSH()
	if s := fmt.Sprint(second["host1"]); !strings.Contains(s, "is already installed") || !strings.Contains(s, "answers test.ping") {
		t.Errorf("second minion.bootstrap:\n%s", s)
	}
}

func freePort(t *testing.T, ip string) int {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startMaster runs the built salt-master with config dir until the test
// ends, and waits for its local socket.
func startMaster(t *testing.T, bin, dir string) {
	t.Helper()
	logPath := filepath.Join(dir, "master.log")
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	log := func() string { b, _ := os.ReadFile(logPath); return string(b) }
	cmd := exec.Command(filepath.Join(bin, "salt-master"), "-c", dir, "-l", "info")
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
		if t.Failed() {
			t.Logf("--- master log ---\n%s", log())
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if ents, _ := os.ReadDir(filepath.Join(dir, "sock")); len(ents) > 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("salt-master did not start:\n%s", log())
}
