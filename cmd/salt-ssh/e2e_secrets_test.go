package main

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/testsupport/testhosts"
)

// Secrets of TestE2ESecretsNeverLeak, unique on the machine so that no
// other test's processes or files can match them. The login password
// needs its own user (see testhosts.Config.Password).
const (
	leakUser       = "brineleak"
	leakPassword   = "leak-test-login-pw-3f9a1c"
	leakPassphrase = "leak-test-key-passphrase-7f3a"
	leakPillar     = "leak-test-pillar-s3cret-8b2e"
	leakThinDir    = "/tmp/brine-leak-thin"
	leakGo         = "/tmp/brine-leak-go" // the state's job waits for it
)

// procWatch samples the command line and the environment of every
// process on the machine (the hosts share the controller's pid
// namespace) for secrets while salt-ssh runs.
type procWatch struct {
	secrets []string
	marker  string // the waiting job's command line holds it
	seen    chan struct{}

	mu    sync.Mutex
	leaks map[string]bool
}

// run samples until stop closes, closing seen once two whole passes ran
// while a process whose command line holds marker was alive.
func (w *procWatch) run(stop <-chan struct{}) {
	self := strconv.Itoa(os.Getpid())
	passes := 0
	for {
		select {
		case <-stop:
			return
		case <-time.After(2 * time.Millisecond):
		}
		if w.pass(self) && passes < 2 {
			if passes++; passes == 2 {
				close(w.seen)
			}
		}
	}
}

// pass scans every process once and reports whether the marked job was
// among them.
func (w *procWatch) pass(self string) bool {
	sawJob := false
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		if filepath.Base(d) == self {
			continue
		}
		cmdline, _ := os.ReadFile(d + "/cmdline")
		environ, _ := os.ReadFile(d + "/environ")
		if bytes.Contains(cmdline, []byte(w.marker)) {
			sawJob = true
		}
		for _, s := range w.secrets {
			for what, b := range map[string][]byte{"command line": cmdline, "environment": environ} {
				if bytes.Contains(b, []byte(s)) {
					w.mu.Lock()
					w.leaks[fmt.Sprintf("secret %q in the %s of %s: %s", s, what, d, bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}))] = true
					w.mu.Unlock()
				}
			}
		}
	}
	return sawJob
}

// TestE2ESecretsNeverLeak: the roster's login and sudo password, a key's
// passphrase and a pillar secret never reach a command line or an
// environment of any process, the output, the controller's files or the
// host's disk; sudoers keeps the whole environment (!env_reset), so
// whatever the sudo hop carried in it would reach the jobs, which print
// their own environment and every process's.
func TestE2ESecretsNeverLeak(t *testing.T) {
	c := testhosts.New(t, 1, testhosts.WithUser(leakUser, leakPassword),
		testhosts.WithHost("host1", testhosts.HostOptions{PasswordAuth: true, SudoPassword: true, SudoKeepEnv: true}))
	if !c.Isolated() {
		testhosts.Skip(t, "needs private host directories")
	}
	e := newEnv(t, c, true)
	t.Setenv("SSH_AUTH_SOCK", "")
	h, _ := c.Host("host1")
	keyPath, _, pub := encryptedKey(t, t.TempDir(), leakPassphrase)
	authorize(t, c, "host1", pub)
	srv := t.TempDir()
	wait := fmt.Sprintf("env; cat /proc/*/environ 2>/dev/null; echo; until [ -e %s ]; do sleep 0.01; done", leakGo)
	writeTree(t, srv, map[string]string{
		"salt/top.sls":      "base:\n  '*':\n    - wait\n",
		"salt/wait.sls":     fmt.Sprintf("wait:\n  cmd.run:\n    - name: %q\n", wait),
		"pillar/top.sls":    "base:\n  '*':\n    - secret\n",
		"pillar/secret.sls": "secret: " + leakPillar + "\n",
	})
	e.useConfig(hostEntry(h, c.User(), fmt.Sprintf("  priv: %s\n  priv_passwd: %s\n  passwd: %s\n  thin_dir: %s\n",
		keyPath, leakPassphrase, leakPassword, leakThinDir)),
		fmt.Sprintf("file_roots:\n  base:\n    - %s/salt\npillar_roots:\n  base:\n    - %s/pillar\n", srv, srv))
	secrets := []string{leakPassword, leakPassphrase, leakPillar}

	w := &procWatch{secrets: secrets, marker: leakGo, seen: make(chan struct{}), leaks: map[string]bool{}}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { w.run(stop) })
	// Let the state's job go once the watch has seen it running.
	release := e.hostPath("host1", leakGo)
	wg.Go(func() {
		select {
		case <-w.seen:
			os.WriteFile(release, nil, 0o644)
		case <-stop:
		}
	})
	var output strings.Builder
	for _, args := range [][]string{
		{"host1", "cmd.run", "env; cat /proc/*/environ 2>/dev/null; echo"},
		{"host1", "state.apply"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), append([]string{"-c", e.dir, "-l", "trace", "--log-file-level", "all", "--out", "json"}, args...),
			strings.NewReader(""), &stdout, &stderr)
		output.WriteString(stdout.String() + stderr.String())
		if code != 0 || !strings.Contains(stdout.String(), "SUDO_USER") {
			t.Errorf("%v: code %d, or the job did not print its environment\n%s\n%s", args, code, stdout.String(), stderr.String())
		}
	}
	close(stop)
	wg.Wait()
	select {
	case <-w.seen:
	default:
		t.Error("the process watch never saw the state's job running")
	}
	for l := range w.leaks {
		t.Error(l)
	}
	for _, s := range secrets {
		if strings.Contains(output.String(), s) {
			t.Errorf("secret %q in salt-ssh output (or a job's view of the processes)", s)
		}
	}
	// The log file, at its most verbose, is among the controller's files
	// checked.
	if log, err := os.ReadFile(filepath.Join(e.dir, "ssh.log")); err != nil || !bytes.Contains(log, []byte("[DEBUG   ]")) {
		t.Errorf("no debug records in the log file (%v):\n%s", err, log)
	}
	checkControllerFiles(t, e, secrets)
	checkHostFiles(t, c, "host1", secrets)
}

// checkControllerFiles: nothing salt-ssh wrote on the controller (cache,
// pki, known_hosts, the log; the roster and master config are the test's own)
// holds a secret.
func checkControllerFiles(t *testing.T, e *env, secrets []string) {
	t.Helper()
	filepath.WalkDir(e.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || p == filepath.Join(e.dir, "roster") || p == filepath.Join(e.dir, "master") {
			return nil
		}
		b, _ := os.ReadFile(p)
		for _, s := range secrets {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("secret %q in %s", s, p)
			}
		}
		return nil
	})
}

// checkHostFiles: nothing in thin_dir, the temp directories, /etc/salt,
// /root or the login user's home on the host holds a secret.
func checkHostFiles(t *testing.T, c *testhosts.Cluster, id string, secrets []string) {
	t.Helper()
	ctx := context.Background()
	if _, err := c.Exec(ctx, id, "ls "+leakThinDir+"/salt-thin-* >/dev/null"); err != nil {
		t.Errorf("no thin binary in %s to scan: %v", leakThinDir, err)
	}
	for _, s := range secrets {
		out, err := c.Exec(ctx, id, fmt.Sprintf(
			`grep -rl -F -- %q %s /tmp /var/tmp /etc/salt /root "$(getent passwd %s | cut -d: -f6)" 2>/dev/null || true`,
			s, leakThinDir, c.User()))
		if err != nil || strings.TrimSpace(string(out)) != "" {
			t.Errorf("secret %q on %s in %q (%v)", s, id, out, err)
		}
	}
}
