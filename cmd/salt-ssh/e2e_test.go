package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/testsupport/testhosts"
)

// The end-to-end tests run salt-ssh's run() in-process against real
// OpenSSH sshd hosts made by internal/testsupport/testhosts, with a thin binary built
// once per test binary.

var (
	thinOnce sync.Once
	thinDir  string
	thinErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if thinDir != "" {
		os.RemoveAll(thinDir)
	}
	os.Exit(code)
}

func buildThin(t *testing.T) string {
	t.Helper()
	thinOnce.Do(func() {
		if thinDir, thinErr = os.MkdirTemp("", "brine-thin-"); thinErr != nil {
			return
		}
		out := filepath.Join(thinDir, "salt-thin-linux-"+runtime.GOARCH)
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", out, "github.com/brinesalt/brine/cmd/salt-thin")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if b, err := cmd.CombinedOutput(); err != nil {
			thinErr = fmt.Errorf("%v: %s", err, b)
		}
	})
	if thinErr != nil {
		t.Fatalf("build thin: %v", thinErr)
	}
	return thinDir
}

// env is one controller: a config dir whose master config points at the
// cluster's roster, and a private pki/cache/known_hosts.
type env struct {
	t     *testing.T
	c     *testhosts.Cluster
	dir   string
	known string
}

func newEnv(t *testing.T, c *testhosts.Cluster, trustHosts bool) *env {
	t.Setenv("BRINE_THIN_DIR", buildThin(t))
	e := &env{t: t, c: c, dir: t.TempDir()}
	e.known = filepath.Join(e.dir, "known_hosts")
	if trustHosts {
		data, err := os.ReadFile(c.KnownHostsPath())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(e.known, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	e.writeMaster("")
	return e
}

func (e *env) writeMaster(extra string) {
	conf := fmt.Sprintf("pki_dir: %s/pki\ncachedir: %s/cache\nknown_hosts_file: %s\nroster_file: %s\nssh_log_file: %s/ssh.log\n%s",
		e.dir, e.dir, e.known, e.c.RosterPath(), e.dir, extra)
	if err := os.WriteFile(filepath.Join(e.dir, "master"), []byte(conf), 0o600); err != nil {
		e.t.Fatal(err)
	}
}

// saltSSH runs salt-ssh with --out json --static and decodes the result.
func (e *env) saltSSH(args ...string) (map[string]any, int, string) {
	e.t.Helper()
	var stdout, stderr bytes.Buffer
	argv := append([]string{"-c", e.dir, "--out", "json", "--static"}, args...)
	code := run(context.Background(), argv, strings.NewReader(""), &stdout, &stderr)
	got := map[string]any{}
	if stdout.Len() > 0 {
		if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
			e.t.Fatalf("salt-ssh %v: output is not JSON: %v\n%s\nstderr: %s", args, err, stdout.String(), stderr.String())
		}
	}
	return got, code, stderr.String()
}

// hostFile reads a file from a host's private filesystem.
func (e *env) hostPath(id, path string) string {
	p, err := e.c.HostPath(id, path)
	if err != nil {
		e.t.Fatal(err)
	}
	return p
}

func thinFiles(t *testing.T, e *env, id string) []string {
	t.Helper()
	out, err := e.c.Exec(context.Background(), id, "ls -a /var/tmp/.brine_*_salt/ 2>/dev/null | grep '^salt-thin-' || true")
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, f := range strings.Fields(string(out)) {
		if f != "." && f != ".." {
			files = append(files, f)
		}
	}
	return files
}

func TestE2EPingAndCommands(t *testing.T) {
	c := testhosts.New(t, 3, testhosts.WithHost("host3", testhosts.HostOptions{NoPython: true}))
	e := newEnv(t, c, true)

	got, code, stderr := e.saltSSH("*", "test.ping")
	if code != 0 || len(got) != 3 || got["host1"] != true || got["host3"] != true {
		t.Fatalf("test.ping: code %d, %v, stderr %s", code, got, stderr)
	}
	got, code, _ = e.saltSSH("host3", "cmd.run", "command -v python3 python || echo no python here")
	if code != 0 || got["host3"] != "no python here" {
		t.Errorf("no-python host: code %d, %v", code, got)
	}
	// The login user is brine; sudo: True in the roster makes the thin
	// binary run as root.
	got, _, _ = e.saltSSH("-L", "host1,host2", "cmd.run", "id -un")
	if got["host1"] != "root" || got["host2"] != "root" || len(got) != 2 {
		t.Errorf("cmd.run id -un under sudo = %v", got)
	}
	got, code, _ = e.saltSSH("-E", "host[12]", "test.arg", "a", "1", "k=v")
	args, _ := got["host1"].(map[string]any)
	if code != 0 || len(got) != 2 || args == nil || fmt.Sprint(args["args"]) != "[a 1]" {
		t.Errorf("test.arg = %v", got)
	}
	got, code, _ = e.saltSSH("host1", "cmd.retcode", "exit 3")
	if code != 20 || got["host1"] != float64(3) {
		t.Errorf("cmd.retcode exit 3: code %d, %v; want 20 and 3", code, got)
	}
}

func TestE2EThinCachedThenWiped(t *testing.T) {
	c := testhosts.New(t, 1)
	e := newEnv(t, c, true)
	if _, code, _ := e.saltSSH("host1", "test.ping"); code != 0 {
		t.Fatal("first run failed")
	}
	first := thinFiles(t, e, "host1")
	if len(first) != 1 || !strings.HasPrefix(first[0], "salt-thin-") {
		t.Fatalf("thin_dir after first run holds %v", first)
	}
	// Prove the second run reuses the binary: make it unwritable-to-replace
	// by noting its inode, and check the -v report says nothing was sent.
	inode := func() string {
		out, err := c.Exec(context.Background(), "host1", "ls -i /var/tmp/.brine_*_salt/"+first[0])
		if err != nil {
			t.Fatal(err)
		}
		return strings.Fields(string(out))[0]
	}
	before := inode()
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"-c", e.dir, "-v", "host1", "test.ping"}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("second run: %d %s", code, stderr.String())
	}
	if strings.Contains(stderr.String(), "thin sent") || !strings.Contains(stderr.String(), "host1: connect") {
		t.Errorf("second run re-sent the thin binary: %s", stderr.String())
	}
	if after := inode(); after != before {
		t.Errorf("thin binary replaced on the second run (inode %s → %s)", before, after)
	}
	if _, code, _ := e.saltSSH("-w", "host1", "test.ping"); code != 0 {
		t.Fatal("wipe run failed")
	}
	if _, err := c.Exec(context.Background(), "host1", "test ! -e /var/tmp/.brine_*_salt"); err != nil {
		t.Errorf("thin_dir not removed by --wipe: %v", err)
	}
}

func TestE2ERawMode(t *testing.T) {
	c := testhosts.New(t, 2)
	e := newEnv(t, c, true)
	got, code, _ := e.saltSSH("-r", "*", "echo hi; echo err >&2; exit 4")
	h, _ := got["host2"].(map[string]any)
	if code != 20 || h == nil || h["stdout"] != "hi\n" || h["stderr"] != "err\n" || h["retcode"] != float64(4) {
		t.Fatalf("raw: code %d, %v", code, got)
	}
	if files := thinFiles(t, e, "host1"); len(files) != 0 {
		t.Errorf("raw mode deployed the thin binary: %v", files)
	}
}

func TestE2EHostKeys(t *testing.T) {
	c := testhosts.New(t, 2)
	e := newEnv(t, c, false)

	got, code, _ := e.saltSSH("host1", "test.ping")
	h, _ := got["host1"].(map[string]any)
	if code != 20 || h == nil || !strings.Contains(fmt.Sprint(h["stderr"]), "-i flag") {
		t.Fatalf("unknown key without -i: code %d, %v", code, got)
	}
	if got, code, _ := e.saltSSH("-i", "*", "test.ping"); code != 0 || got["host1"] != true || got["host2"] != true {
		t.Fatalf("-i run: code %d, %v", code, got)
	}
	known, _ := os.ReadFile(e.known)
	if n := strings.Count(string(known), "\n"); n != 2 {
		t.Errorf("known_hosts holds %d lines after -i, want 2:\n%s", n, known)
	}
	if _, code, _ := e.saltSSH("*", "test.ping"); code != 0 {
		t.Errorf("recorded keys not accepted without -i")
	}
	if _, err := c.ChangeHostKey(context.Background(), "host2"); err != nil {
		t.Fatal(err)
	}
	for _, flags := range [][]string{nil, {"-i"}} {
		got, code, _ := e.saltSSH(append(flags, "*", "test.ping")...)
		h, _ := got["host2"].(map[string]any)
		if code != 20 || got["host1"] != true || h == nil || !strings.Contains(strings.ToLower(fmt.Sprint(h["stderr"])), "changed") {
			t.Errorf("changed key with flags %v: code %d, %v", flags, code, got)
		}
	}
	if got, code, _ := e.saltSSH("--no-host-keys", "host2", "test.ping"); code != 0 || got["host2"] != true {
		t.Errorf("--no-host-keys: code %d, %v", code, got)
	}
}

func TestE2EFaultsStayPerHost(t *testing.T) {
	c := testhosts.New(t, 4, testhosts.WithHost("host3", testhosts.HostOptions{NoSudo: true}))
	e := newEnv(t, c, true)
	ctx := context.Background()
	if err := c.StopHost(ctx, "host2"); err != nil {
		t.Fatal(err)
	}
	if err := c.LinkDown(ctx, "host4"); err != nil {
		t.Fatal(err)
	}
	e.writeMaster("roster_defaults:\n  timeout: 2\n")
	got, code, stderr := e.saltSSH("*", "test.ping")
	if code != 20 || got["host1"] != true {
		t.Fatalf("code %d, %v, %s", code, got, stderr)
	}
	if s, _ := got["host2"].(string); !strings.HasPrefix(s, "ssh:") {
		t.Errorf("stopped host: %v", got["host2"])
	}
	if s, _ := got["host4"].(string); !strings.HasPrefix(s, "ssh:") {
		t.Errorf("unreachable host: %v", got["host4"])
	}
	h, _ := got["host3"].(map[string]any)
	if h == nil || !strings.Contains(fmt.Sprint(h["stdout"]), "sudo") {
		t.Errorf("host without sudo rights: %v", got["host3"])
	}
}

// writeRoster writes a flat roster for the cluster with extra keys per
// host, and points the env's master config at it.
func (e *env) writeRoster(extra map[string]string) {
	e.t.Helper()
	var b strings.Builder
	for _, h := range e.c.Hosts() {
		fmt.Fprintf(&b, "%s:\n  host: %s\n  port: %d\n  user: %s\n  priv: %s\n  sudo: True\n%s",
			h.ID, h.IP, h.Port, e.c.User(), e.c.KeyPath(), extra[h.ID])
	}
	e.useRoster(b.String())
}

// useRoster makes the env's master config read a roster with this text.
func (e *env) useRoster(text string) {
	e.t.Helper()
	path := filepath.Join(e.dir, "roster")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		e.t.Fatal(err)
	}
	conf := fmt.Sprintf("pki_dir: %s/pki\ncachedir: %s/cache\nknown_hosts_file: %s\nroster_file: %s\nssh_log_file: %s/ssh.log\n",
		e.dir, e.dir, e.known, path, e.dir)
	if err := os.WriteFile(filepath.Join(e.dir, "master"), []byte(conf), 0o600); err != nil {
		e.t.Fatal(err)
	}
}

func TestE2ESudoPasswordAndRequireTTY(t *testing.T) {
	c := testhosts.New(t, 3,
		testhosts.WithHost("host1", testhosts.HostOptions{SudoPassword: true}),
		testhosts.WithHost("host2", testhosts.HostOptions{SudoPassword: true, RequireTTY: true}),
		testhosts.WithHost("host3", testhosts.HostOptions{SudoPassword: true}))
	e := newEnv(t, c, true)
	pw := fmt.Sprintf("  passwd: %q\n", c.Password())
	e.writeRoster(map[string]string{"host1": pw, "host2": pw})

	got, code, stderr := e.saltSSH("*", "cmd.run", "id -un")
	if got["host1"] != "root" || got["host2"] != "root" {
		t.Errorf("sudo with password (host1) and with requiretty (host2): %v\n%s", got, stderr)
	}
	h3, _ := got["host3"].(map[string]any)
	if code != 20 || h3 == nil || !strings.Contains(fmt.Sprint(h3["stdout"]), "sudo expected a password") {
		t.Errorf("host3 without a password: code %d, %v", code, got["host3"])
	}
	// The password must not reach the output, the controller's files or
	// the hosts' disks.
	out, _ := json.Marshal(got)
	if strings.Contains(string(out)+stderr, c.Password()) {
		t.Errorf("password leaked into salt-ssh output")
	}
	for _, id := range []string{"host1", "host2"} {
		leak, err := c.Exec(context.Background(), id,
			"grep -rl -F -- "+fmt.Sprintf("%q", c.Password())+" /var/tmp /tmp /etc/salt 2>/dev/null || true")
		if err != nil || strings.TrimSpace(string(leak)) != "" {
			t.Errorf("%s: password found on disk in %q (%v)", id, leak, err)
		}
	}
	e.writeRoster(map[string]string{"host1": "  passwd: wrong-password\n"})
	got, _, _ = e.saltSSH("host1", "test.ping")
	h1, _ := got["host1"].(map[string]any)
	if h1 == nil || !strings.Contains(fmt.Sprint(h1["stdout"]), "sudo refused the password") {
		t.Errorf("wrong sudo password: %v", got)
	}
}

func TestE2EInterruptStopsRemoteJob(t *testing.T) {
	c := testhosts.New(t, 1)
	e := newEnv(t, c, true)
	// Log in as root: OpenSSH refuses to forward a signal to a root
	// session ("session signalling requires privilege separation"), so only
	// the thin binary's own hang-up watch can stop the job.
	h, _ := c.Host("host1")
	e.useRoster(fmt.Sprintf("host1:\n  host: %s\n  port: %d\n  user: root\n  priv: %s\n", h.IP, h.Port, c.KeyPath()))
	if _, code, _ := e.saltSSH("host1", "test.ping"); code != 0 { // deploy first
		t.Fatal("warm-up failed")
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	var stdout, stderr bytes.Buffer
	go func() {
		done <- run(ctx, []string{"-c", e.dir, "host1", "cmd.run", "sleep 2.5; touch /var/tmp/should-not-exist"}, nil, &stdout, &stderr)
	}()
	// Cancel once the command is running on the host.
	for i := 0; ; i++ {
		// Anchored, so the pattern does not match this shell's own argv.
		out, _ := c.Exec(context.Background(), "host1", "pgrep -f '^sleep 2.5$' || true")
		if strings.TrimSpace(string(out)) != "" {
			break
		}
		if i > 100 {
			t.Fatal("remote command never started")
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if code := <-done; code == 0 {
		t.Errorf("interrupted run exited 0: %s", stdout.String())
	}
	time.Sleep(3 * time.Second)
	if _, err := c.Exec(context.Background(), "host1", "test ! -e /var/tmp/should-not-exist"); err != nil {
		t.Errorf("the remote job ran on after the interrupt: %v", err)
	}
}

func TestE2EGrainAndCompoundTargeting(t *testing.T) {
	c := testhosts.New(t, 3)
	e := newEnv(t, c, true)
	e.writeRoster(map[string]string{"host1": "  grains:\n    role: web\n", "host2": "  grains:\n    role: db\n"})
	pillar := t.TempDir()
	writeTree(t, pillar, map[string]string{"top.sls": "base:\n  host3:\n    - cache\n", "cache.sls": "tier: cache\n"})
	master, _ := os.ReadFile(filepath.Join(e.dir, "master"))
	os.WriteFile(filepath.Join(e.dir, "master"), append(master, fmt.Sprintf("pillar_roots:\n  base:\n    - %s\n", pillar)...), 0o600)
	ids := func(got map[string]any) string {
		var out []string
		for id := range got {
			out = append(out, id)
		}
		slices.Sort(out)
		return strings.Join(out, ",")
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-G", "role:web", "test.ping"}, "host1"},
		{[]string{"-G", "os_family:Debian", "test.ping"}, "host1,host2,host3"},
		{[]string{"-C", "G@role:db or host3", "test.ping"}, "host2,host3"},
		{[]string{"-C", "not G@role:*", "test.ping"}, "host3"},
		{[]string{"-S", c.Hosts()[0].IP, "test.ping"}, "host1"},
		{[]string{"-G", "role:nothing", "test.ping"}, ""},
		{[]string{"-I", "tier:cache", "test.ping"}, "host3"},
		{[]string{"-C", "I@tier:cache or G@role:web", "test.ping"}, "host1,host3"},
	} {
		got, code, stderr := e.saltSSH(c.args...)
		if ids(got) != c.want || code != 0 {
			t.Errorf("salt-ssh %v matched %q (code %d), want %q\n%s", c.args, ids(got), code, c.want, stderr)
		}
	}
	// The cache now answers without asking: a stopped host still matches
	// on its cached grains (and then fails to connect, as it should).
	if err := c.StopHost(context.Background(), "host1"); err != nil {
		t.Fatal(err)
	}
	got, code, _ := e.saltSSH("-G", "role:web", "test.ping")
	if s, _ := got["host1"].(string); code != 20 || !strings.HasPrefix(s, "ssh:") {
		t.Errorf("cached match of a stopped host: code %d, %v", code, got)
	}
}

func TestE2EPreFlightAndSudoUser(t *testing.T) {
	c := testhosts.New(t, 2)
	e := newEnv(t, c, true)
	// A user in the login user's group to sudo to, made in each host's
	// private /etc (sudoers there lets the login user run anything as anyone).
	const other = "brine-sudo-e2e"
	for _, h := range c.Hosts() {
		if out, err := c.Exec(t.Context(), h.ID, "useradd --no-create-home --gid "+c.User()+" "+other); err != nil {
			t.Fatalf("useradd on %s: %v %s", h.ID, err, out)
		}
	}
	script := filepath.Join(e.dir, "pre.sh")
	if err := os.WriteFile(script, []byte("echo ran \"$@\" >> /var/tmp/pre-flight.log\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fail := filepath.Join(e.dir, "fail.sh")
	if err := os.WriteFile(fail, []byte("echo cannot prepare >&2; exit 7\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.writeRoster(map[string]string{
		"host1": fmt.Sprintf("  sudo_user: %s\n  ssh_pre_flight: %s\n  ssh_pre_flight_args: [one, 'two words']\n", other, script),
		"host2": fmt.Sprintf("  ssh_pre_flight: %s\n", fail),
	})
	got, code, stderr := e.saltSSH("*", "cmd.run", "id -un")
	if got["host1"] != other {
		t.Errorf("sudo_user: host1 = %v\n%s", got["host1"], stderr)
	}
	h2, _ := got["host2"].(map[string]any)
	if code != 20 || h2 == nil || h2["retcode"] != float64(7) || !strings.Contains(fmt.Sprint(h2["stderr"]), "cannot prepare") {
		t.Errorf("failing pre-flight: code %d, %v", code, got["host2"])
	}
	// The script ran once, before the thin_dir existed, with its arguments.
	for range 2 {
		if _, code, _ := e.saltSSH("host1", "test.ping"); code != 0 {
			t.Fatal("later run failed")
		}
	}
	out, err := c.Exec(context.Background(), "host1", "cat /var/tmp/pre-flight.log; ls /tmp/.brine-pre-flight-* 2>/dev/null | wc -l")
	if err != nil || string(out) != "ran one two words\n0\n" {
		t.Errorf("pre-flight log and leftovers = %q, %v", out, err)
	}
	if _, code, _ := e.saltSSH("--pre-flight", "host1", "test.ping"); code != 0 {
		t.Fatal("--pre-flight run failed")
	}
	if out, _ := c.Exec(context.Background(), "host1", "wc -l < /var/tmp/pre-flight.log"); strings.TrimSpace(string(out)) != "2" {
		t.Errorf("--pre-flight did not run the script again: %q", out)
	}
}

func TestE2ESetPathUmaskMinionOpts(t *testing.T) {
	c := testhosts.New(t, 1)
	e := newEnv(t, c, true)
	e.writeRoster(map[string]string{"host1": "  set_path: /opt/brine-extra:$PATH\n  cmd_umask: 0027\n  minion_opts:\n    brine_e2e_opt: from-roster\n"})
	got, code, stderr := e.saltSSH("host1", "cmd.run", `echo "$PATH"; umask`)
	out, _ := got["host1"].(string)
	lines := strings.Split(out, "\n")
	if code != 0 || len(lines) != 2 || !strings.HasPrefix(lines[0], "/opt/brine-extra:") || lines[1] != "0027" {
		t.Errorf("set_path and cmd_umask: code %d, %q\n%s", code, out, stderr)
	}
	got, _, _ = e.saltSSH("host1", "config.get", "brine_e2e_opt")
	if got["host1"] != "from-roster" {
		t.Errorf("minion_opts not seen by config.get: %v", got)
	}
}
