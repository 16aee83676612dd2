package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// The end-to-end test builds salt-master, salt-minion, salt, salt-run and
// salt-key, runs a master on loopback and minions as separate processes
// with their own pki and cache directories, and drives them with the
// real command-line tools over real ZeroMQ sockets.

type cluster struct {
	t       *testing.T
	bin     string
	dir     string
	pubPort int
	retPort int
	master  *exec.Cmd
	minions map[string]*exec.Cmd
	logs    map[string]*syncBuffer
}

// syncBuffer is a bytes.Buffer safe to read while a process writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func buildTools(t *testing.T) string {
	t.Helper()
	bin := t.TempDir()
	out, err := exec.Command("go", "build", "-o", bin+"/",
		"github.com/brinesalt/brine/cmd/salt-master", "github.com/brinesalt/brine/cmd/salt-minion",
		"github.com/brinesalt/brine/cmd/salt", "github.com/brinesalt/brine/cmd/salt-run",
		"github.com/brinesalt/brine/cmd/salt-key").CombinedOutput()
	if err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

func newCluster(t *testing.T, masterConf string) *cluster {
	c := &cluster{t: t, bin: buildTools(t), dir: t.TempDir(), pubPort: freePort(t), retPort: freePort(t),
		minions: map[string]*exec.Cmd{}, logs: map[string]*syncBuffer{}}
	d := c.dir
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
	c.startMaster()
	t.Cleanup(c.stopAll)
	return c
}

func (c *cluster) startMaster() {
	cmd := exec.Command(filepath.Join(c.bin, "salt-master"), "-c", filepath.Join(c.dir, "master"), "-l", "info")
	buf := &syncBuffer{}
	c.logs["master"] = buf
	cmd.Stdout, cmd.Stderr = buf, buf
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	c.master = cmd
	c.waitFor("master socket", func() bool {
		_, err := os.Stat(filepath.Join(c.dir, "master/sock/brine-master.sock"))
		return err == nil
	})
}

func (c *cluster) stopMaster() {
	if c.master != nil {
		c.master.Process.Signal(os.Interrupt)
		c.master.Wait()
		c.master = nil
	}
}

func (c *cluster) stopAll() {
	for _, m := range c.minions {
		m.Process.Signal(os.Interrupt)
	}
	for _, m := range c.minions {
		m.Wait()
	}
	c.stopMaster()
	if c.t.Failed() {
		for name, b := range c.logs {
			c.t.Logf("--- %s log ---\n%s", name, b.String())
		}
	}
}

// minionConf writes a minion config; pkiName lets two minions share an id
// with different keys.
func (c *cluster) minionConf(id, pkiName, extra string) string {
	dir := filepath.Join(c.dir, "minion-"+pkiName)
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

func (c *cluster) startMinion(name, dir string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(c.bin, "salt-minion"), "-c", dir, "-l", "info")
	buf := &syncBuffer{}
	c.logs[name] = buf
	cmd.Stdout, cmd.Stderr = buf, buf
	if err := cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	c.minions[name] = cmd
	return cmd
}

func (c *cluster) run(tool string, args ...string) (string, int) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	full := append([]string{"-c", filepath.Join(c.dir, "master")}, args...)
	cmd := exec.CommandContext(ctx, filepath.Join(c.bin, tool), full...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		c.t.Fatalf("%s %v: %v", tool, args, err)
	}
	return out.String(), code
}

func (c *cluster) waitFor(what string, cond func() bool) {
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

func (c *cluster) pingUntil(tgt string, want ...string) {
	c.t.Helper()
	c.waitFor("ping "+tgt, func() bool {
		out, _ := c.run("salt", tgt, "test.ping", "-t", "2")
		for _, w := range want {
			if !strings.Contains(out, w+":\n    True") {
				return false
			}
		}
		return true
	})
}

func TestEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemons")
	}
	c := newCluster(t, "")
	c.startMinion("m1", c.minionConf("m1", "m1", "grains: {role: web}"))
	c.startMinion("m2", c.minionConf("m2", "m2", "grains: {role: db}"))

	t.Run("pending then accepted", func(t *testing.T) {
		c.waitFor("pending keys", func() bool {
			out, _ := c.run("salt-key", "-L")
			return strings.Contains(out, "Unaccepted Keys:\nm1\nm2\n")
		})
		if out, code := c.run("salt-key", "-a", "m1", "-y"); code != 0 {
			t.Fatalf("salt-key -a: %d %s", code, out)
		}
		c.pingUntil("m1", "m1")
		if out, code := c.run("salt-key", "-A", "-y"); code != 0 {
			t.Fatalf("salt-key -A: %d %s", code, out)
		}
		c.pingUntil("*", "m1", "m2")
		pub, _ := os.ReadFile(filepath.Join(c.dir, "minion-m1/pki/minion_master.pub"))
		master, _ := os.ReadFile(filepath.Join(c.dir, "master/pki/master.pub"))
		if len(pub) == 0 || !bytes.Equal(bytes.TrimSpace(pub), bytes.TrimSpace(master)) {
			t.Fatalf("minion_master.pub not pinned to master.pub")
		}
		for _, f := range []struct {
			name string
			mode os.FileMode
		}{{"minion.pem", 0o077}, {"minion.pub", 0o133}} {
			// Salt writes minion.pem 0400 and minion.pub 0644: the
			// private key is readable by its owner only.
			st, err := os.Stat(filepath.Join(c.dir, "minion-m1/pki", f.name))
			if err != nil || st.Mode().Perm()&f.mode != 0 {
				t.Fatalf("%s: %v %v", f.name, err, st)
			}
		}
	})

	t.Run("targeting", func(t *testing.T) {
		for _, tc := range []struct {
			args []string
			want []string
			not  []string
		}{
			{[]string{"-G", "role:web", "test.ping"}, []string{"m1:\n    True"}, []string{"m2"}},
			{[]string{"-C", "G@role:db or m1", "test.ping"}, []string{"m1:\n    True", "m2:\n    True"}, nil},
			{[]string{"-C", "G@role:db and not m1", "test.ping"}, []string{"m2:\n    True"}, []string{"m1"}},
			{[]string{"-L", "m2", "test.ping"}, []string{"m2:\n    True"}, []string{"m1"}},
			{[]string{"-E", "m[12]", "test.ping"}, []string{"m1:\n    True", "m2:\n    True"}, nil},
			{[]string{"-N", "webs", "test.ping"}, []string{"m1:\n    True"}, []string{"m2"}},
			{[]string{"-I", "site:m1.example", "test.ping"}, []string{"m1:\n    True"}, []string{"m2"}},
			{[]string{"m1", "cmd.run", "echo hi-from-$(hostname | wc -c)"}, []string{"m1:\n    hi-from-"}, nil},
			{[]string{"m1", "cp.get_file_str", "salt://hello.txt"}, nil, nil},
		} {
			out, _ := c.run("salt", tc.args...)
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("salt %v: want %q in\n%s", tc.args, w, out)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(out, n+":") {
					t.Errorf("salt %v: %s should not answer:\n%s", tc.args, n, out)
				}
			}
		}
	})

	t.Run("async and lookup_jid", func(t *testing.T) {
		out, code := c.run("salt", "*", "test.sleep", "1", "--async")
		m := regexp.MustCompile(`Executed command with job ID: (\d{20})`).FindStringSubmatch(out)
		if code != 0 || m == nil {
			t.Fatalf("--async: %d %q", code, out)
		}
		c.waitFor("lookup_jid", func() bool {
			out, _ := c.run("salt-run", "jobs.lookup_jid", m[1])
			return strings.Contains(out, "m1:\n    True") && strings.Contains(out, "m2:\n    True")
		})
		out, _ = c.run("salt-run", "jobs.list_jobs")
		if !strings.Contains(out, m[1]+":") || !strings.Contains(out, "test.sleep") {
			t.Fatalf("list_jobs:\n%s", out)
		}
	})

	t.Run("active jobs and the event bus", func(t *testing.T) {
		st, err := os.Stat(filepath.Join(c.dir, "master/sock/brine-master.sock"))
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("local socket: %v %v", err, st)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		ev := exec.CommandContext(ctx, filepath.Join(c.bin, "salt-run"), "-c", filepath.Join(c.dir, "master"),
			"state.event", "pretty=True", "tagmatch=salt/job/*", "count=3")
		var evOut syncBuffer
		ev.Stdout = &evOut
		if err := ev.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(500 * time.Millisecond)
		out, _ := c.run("salt", "m1", "test.sleep", "3", "--async")
		jid := regexp.MustCompile(`\d{20}`).FindString(out)
		out, _ = c.run("salt-run", "jobs.active")
		if !strings.Contains(out, jid+":") || !strings.Contains(out, "test.sleep") {
			t.Fatalf("jobs.active:\n%s", out)
		}
		if err := ev.Wait(); err != nil {
			t.Fatalf("state.event: %v\n%s", err, evOut.String())
		}
		if !strings.Contains(evOut.String(), "salt/job/"+jid+"/new\t{\n    \"_stamp\"") {
			t.Fatalf("state.event output:\n%s", evOut.String())
		}
	})

	t.Run("kill_job", func(t *testing.T) {
		out, _ := c.run("salt", "m2", "test.sleep", "30", "--async")
		jid := regexp.MustCompile(`\d{20}`).FindString(out)
		c.waitFor("job running", func() bool {
			out, _ := c.run("salt", "m2", "saltutil.find_job", jid)
			return strings.Contains(out, "test.sleep")
		})
		out, _ = c.run("salt", "m2", "saltutil.kill_job", jid)
		if !strings.Contains(out, "Signal 9 sent to job "+jid) {
			t.Fatalf("kill_job:\n%s", out)
		}
		out, _ = c.run("salt", "m2", "saltutil.find_job", jid)
		if strings.Contains(out, "test.sleep") {
			t.Fatalf("job still running:\n%s", out)
		}
	})

	t.Run("long job outlives the timeout", func(t *testing.T) {
		out, code := c.run("salt", "m1", "test.sleep", "5", "-t", "1")
		if code != 0 || !strings.Contains(out, "m1:\n    True") {
			t.Fatalf("find_job did not keep the job alive: %d\n%s", code, out)
		}
	})

	t.Run("batch", func(t *testing.T) {
		out, code := c.run("salt", "*", "test.ping", "-b", "1")
		if code != 0 || !strings.Contains(out, "Executing run on ['m1']") || !strings.Contains(out, "Executing run on ['m2']") {
			t.Fatalf("batch: %d\n%s", code, out)
		}
		out, code = c.run("salt", "*", "test.ping", "-b", "50%", "--batch-wait", "0.2")
		if code != 0 || strings.Count(out, "    True") != 2 {
			t.Fatalf("batch 50%%: %d\n%s", code, out)
		}
	})

	t.Run("manage", func(t *testing.T) {
		out, _ := c.run("salt-run", "manage.status")
		if !strings.Contains(out, "up:\n    - m1\n    - m2") {
			t.Fatalf("manage.status:\n%s", out)
		}
	})

	t.Run("rejected and duplicate keys receive nothing", func(t *testing.T) {
		c.startMinion("m3", c.minionConf("m3", "m3", ""))
		c.waitFor("m3 pending", func() bool {
			out, _ := c.run("salt-key", "-l", "un")
			return strings.Contains(out, "m3")
		})
		c.run("salt-key", "-r", "m3", "-y")
		// A second minion claiming m1 with another key.
		c.startMinion("m1-impostor", c.minionConf("m1", "impostor", ""))
		c.waitFor("impostor denied", func() bool {
			out, _ := c.run("salt-key", "-L")
			return strings.Contains(out, "Denied Keys:\nm1")
		})
		out, _ := c.run("salt", "*", "test.ping", "-t", "2")
		if strings.Contains(out, "m3") || strings.Count(out, "m1:") != 1 {
			t.Fatalf("ping:\n%s", out)
		}
		if strings.Contains(c.logs["m3"].String(), "authenticated with the master") {
			t.Fatalf("rejected minion authenticated")
		}
		if strings.Contains(c.logs["m1-impostor"].String(), "authenticated with the master") {
			t.Fatalf("impostor authenticated")
		}
	})

	t.Run("aes rotation on key delete", func(t *testing.T) {
		c.run("salt-key", "-d", "m3", "-y")
		c.waitFor("rotation", func() bool { return strings.Count(c.logs["master"].String(), "AES key rotated") >= 2 })
		c.pingUntil("*", "m1", "m2")
	})

	t.Run("master restart with a queued return", func(t *testing.T) {
		out, _ := c.run("salt", "m1", "test.sleep", "3", "--async")
		jid := regexp.MustCompile(`\d{20}`).FindString(out)
		time.Sleep(500 * time.Millisecond)
		c.stopMaster()
		time.Sleep(4 * time.Second) // the return is queued while the master is down
		c.startMaster()
		c.waitFor("queued return", func() bool {
			out, _ := c.run("salt-run", "jobs.lookup_jid", jid)
			return strings.Contains(out, "m1:\n    True")
		})
		c.pingUntil("*", "m1", "m2")
	})

	t.Run("changed master key refused", func(t *testing.T) {
		dir := c.minionConf("m4", "m4", "")
		os.MkdirAll(filepath.Join(dir, "pki"), 0o700)
		if out, code := c.run("salt-key", "--gen-keys", "other", "--gen-keys-dir", filepath.Join(dir, "pki")); code != 0 {
			t.Fatalf("gen-keys: %s", out)
		}
		os.Rename(filepath.Join(dir, "pki/other.pub"), filepath.Join(dir, "pki/minion_master.pub"))
		c.run("salt-key", "-a", "m4", "-y")
		cmd := c.startMinion("m4", dir)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		// Accept m4 once it signs in, so the master answers with its key.
		c.waitFor("m4 pending", func() bool {
			c.run("salt-key", "-a", "m4", "-y")
			out, _ := c.run("salt-key", "-l", "acc")
			return strings.Contains(out, "m4")
		})
		select {
		case err := <-done:
			delete(c.minions, "m4")
			ee, ok := err.(*exec.ExitError)
			if !ok || ee.ExitCode() != 2 || !strings.Contains(c.logs["m4"].String(), "master key has changed") {
				t.Fatalf("minion with another master key: %v\n%s", err, c.logs["m4"])
			}
		case <-time.After(30 * time.Second):
			t.Fatal("minion trusted a master with a different key")
		}
	})
}
