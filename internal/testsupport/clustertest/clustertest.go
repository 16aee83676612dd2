// Package clustertest runs a real Brine master and minions for
// end-to-end tests: it builds the daemons and command-line tools, starts
// a master on loopback and minions as separate processes with their own
// pki and cache directories, all talking over real ZeroMQ sockets.
package clustertest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// T is the part of testing.TB a cluster uses, so benchmark programs
// can run one too.
type T interface {
	Helper()
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	Logf(format string, args ...any)
	TempDir() string
	Cleanup(func())
	Failed() bool
}

// Cluster is a running master with its minions. Bin holds the built
// tools, Dir the master's and minions' directories (master/,
// minion-<name>/, srv/salt, srv/pillar), Logs each process's output.
type Cluster struct {
	t       T
	Bin     string
	Dir     string
	pubPort int
	retPort int
	master  *exec.Cmd
	Minions map[string]*exec.Cmd
	Logs    map[string]*SyncBuffer
	// RunTimeout bounds each Run; zero means a minute.
	RunTimeout time.Duration
	// masterCommand, when set, makes the master's command (Setup).
	masterCommand func(name string, args ...string) *exec.Cmd
}

// Setup is what NewSetup starts.
type Setup struct {
	// MasterConf is appended to the master's config.
	MasterConf string
	// Tools are built besides the default ones (package paths under cmd/).
	Tools []string
	// Bin, when set, is a directory of tools another cluster built
	// (Cluster.Bin), used instead of building them again.
	Bin string
	// MasterCommand makes the command that runs salt-master with its
	// arguments, for a master started in a wrapper such as a pamtest
	// mount namespace; nil runs it directly.
	MasterCommand func(name string, args ...string) *exec.Cmd
}

// SyncBuffer is a bytes.Buffer safe to read while a process writes it.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func freePort(t T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// buildTools builds salt-master with cgo (its pam eauth links libpam,
// as the Makefile builds it) and the other tools static, as make does.
func buildTools(t T, extra []string) string {
	t.Helper()
	bin := t.TempDir()
	goBuild := func(cgo string, tools []string) {
		args := []string{"build", "-o", bin + "/"}
		for _, tool := range tools {
			args = append(args, "github.com/brinesalt/brine/cmd/"+tool)
		}
		cmd := exec.Command("go", args...)
		cmd.Env = append(os.Environ(), "CGO_ENABLED="+cgo)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build: %v\n%s", err, out)
		}
	}
	goBuild("1", []string{"salt-master"})
	goBuild("0", append([]string{"salt-minion", "salt", "salt-run", "salt-key"}, extra...))
	return bin
}

// New starts a master with masterConf appended to its config; tools
// are built besides salt-master, salt-minion, salt, salt-run and
// salt-key (package paths under cmd/). The cluster stops with the test.
func New(t T, masterConf string, tools ...string) *Cluster {
	return NewSetup(t, Setup{MasterConf: masterConf, Tools: tools})
}

// NewSetup is New with the master started as s says.
func NewSetup(t T, s Setup) *Cluster {
	masterConf := s.MasterConf
	bin := s.Bin
	if bin == "" {
		bin = buildTools(t, s.Tools)
	}
	c := &Cluster{t: t, Bin: bin, Dir: t.TempDir(), pubPort: freePort(t), retPort: freePort(t),
		Minions: map[string]*exec.Cmd{}, Logs: map[string]*SyncBuffer{}, masterCommand: s.MasterCommand}
	d := c.Dir
	for _, sub := range []string{"master", "srv/salt", "srv/pillar"} {
		os.MkdirAll(filepath.Join(d, sub), 0o700)
	}
	os.WriteFile(filepath.Join(d, "srv/pillar/top.sls"), []byte("base:\n  'G@role:web':\n    - match: compound\n    - web\n"), 0o600)
	os.WriteFile(filepath.Join(d, "srv/pillar/web.sls"), []byte("site: {{ grains['id'] }}.example\n"), 0o600)
	os.WriteFile(filepath.Join(d, "srv/salt/hello.txt"), []byte("hello from the master\n"), 0o600)
	conf := fmt.Sprintf(`interface: 127.0.0.1
publish_port: %d
ret_port: %d
pki_dir: %s/master/pki
cachedir: %s/master/cache
sock_dir: %s/master/sock
file_roots: {base: [%s/srv/salt]}
pillar_roots: {base: [%s/srv/pillar]}
timeout: 3
gather_job_timeout: 3
nodegroups:
  webs: 'G@role:web'
%s
`, c.pubPort, c.retPort, d, d, d, d, d, masterConf)
	os.WriteFile(filepath.Join(d, "master/master"), []byte(conf), 0o600)
	c.StartMaster()
	t.Cleanup(c.stopAll)
	return c
}

// StartMaster starts (or restarts) the master and waits for its socket.
func (c *Cluster) StartMaster() {
	start := exec.Command
	if c.masterCommand != nil {
		start = c.masterCommand
	}
	cmd := start(filepath.Join(c.Bin, "salt-master"), "-c", filepath.Join(c.Dir, "master"), "-l", "info")
	buf := &SyncBuffer{}
	c.Logs["master"] = buf
	cmd.Stdout, cmd.Stderr = buf, buf
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	c.master = cmd
	c.WaitFor("master socket", func() bool {
		_, err := os.Stat(filepath.Join(c.Dir, "master/sock/brine-master.sock"))
		return err == nil
	})
}

// MasterPID is the running master's process id (0 when stopped).
func (c *Cluster) MasterPID() int {
	if c.master == nil {
		return 0
	}
	return c.master.Process.Pid
}

// RetPort is the master's request (ret_port) port on 127.0.0.1.
func (c *Cluster) RetPort() int { return c.retPort }

// StopMaster interrupts the master and waits for it to exit.
func (c *Cluster) StopMaster() {
	if c.master != nil {
		c.master.Process.Signal(os.Interrupt)
		c.master.Wait()
		c.master = nil
	}
}

func (c *Cluster) stopAll() {
	for _, m := range c.Minions {
		m.Process.Signal(os.Interrupt)
	}
	for _, m := range c.Minions {
		m.Wait()
	}
	c.StopMaster()
	if c.t.Failed() {
		for name, b := range c.Logs {
			c.t.Logf("--- %s log ---\n%s", name, b.String())
		}
	}
}

// MinionConf writes a minion config; pkiName lets two minions share an id
// with different keys.
func (c *Cluster) MinionConf(id, pkiName, extra string) string {
	dir := filepath.Join(c.Dir, "minion-"+pkiName)
	os.MkdirAll(dir, 0o700)
	conf := fmt.Sprintf(`master: 127.0.0.1
master_port: %d
publish_port: %d
id: %s
pki_dir: %s/pki
cachedir: %s/cache
acceptance_wait_time: 1
random_reauth_delay: 1
recon_default: 200
recon_max: 500
return_retry_timer: 1
return_retry_timer_max: 2
%s
`, c.retPort, c.pubPort, id, dir, dir, extra)
	os.WriteFile(filepath.Join(dir, "minion"), []byte(conf), 0o600)
	return dir
}

// StartMinion starts a salt-minion with the config directory dir.
func (c *Cluster) StartMinion(name, dir string) *exec.Cmd {
	return c.StartMinionWrapped(name, dir)
}

// StartMinionWrapped starts a salt-minion under a wrapper command that
// ends by exec'ing its arguments (for example unshare -m with a private
// mount), so each minion can see its own file system at one path.
func (c *Cluster) StartMinionWrapped(name, dir string, wrapper ...string) *exec.Cmd {
	args := append(append([]string{}, wrapper...), filepath.Join(c.Bin, "salt-minion"), "-c", dir, "-l", "info")
	cmd := exec.Command(args[0], args[1:]...)
	buf := &SyncBuffer{}
	c.Logs[name] = buf
	cmd.Stdout, cmd.Stderr = buf, buf
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	c.Minions[name] = cmd
	return cmd
}

// Run runs a built tool against the master config and returns its
// combined output and exit code.
func (c *Cluster) Run(tool string, args ...string) (string, int) {
	c.t.Helper()
	return c.run(nil, nil, tool, args)
}

// RunInput is Run with input on the tool's stdin and env added to its
// environment. The tool runs in a session of its own, without a
// controlling terminal, so a password prompt reads stdin as it does
// under a pipe (getpass's fallback).
func (c *Cluster) RunInput(input string, env []string, tool string, args ...string) (string, int) {
	c.t.Helper()
	return c.run(strings.NewReader(input), env, tool, args)
}

func (c *Cluster) run(stdin io.Reader, env []string, tool string, args []string) (string, int) {
	c.t.Helper()
	limit := c.RunTimeout
	if limit == 0 {
		limit = 60 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	full := append([]string{"-c", filepath.Join(c.Dir, "master")}, args...)
	cmd := exec.CommandContext(ctx, filepath.Join(c.Bin, tool), full...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if stdin != nil {
		cmd.Stdin = stdin
		cmd.Env = append(os.Environ(), env...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	}
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		c.t.Fatalf("%s %v: %v", tool, args, err)
	}
	return out.String(), code
}

// WaitFor polls cond for up to 45 seconds and fails the test if it never
// holds.
func (c *Cluster) WaitFor(what string, cond func() bool) {
	c.t.Helper()
	deadline := time.Now().Add(45 * time.Second)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
	c.t.Fatalf("timed out waiting for %s", what)
}

// PingUntil waits until every minion in want answers test.ping on tgt.
func (c *Cluster) PingUntil(tgt string, want ...string) {
	c.t.Helper()
	c.WaitFor("ping "+tgt, func() bool {
		out, _ := c.Run("salt", tgt, "test.ping", "-t", "2")
		for _, w := range want {
			if !strings.Contains(out, w+":\n    True") {
				return false
			}
		}
		return true
	})
}
