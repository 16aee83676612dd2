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
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/testsupport/testhosts"
)

// The promotion test: a Brine master runs on the controller, listening on
// the harness bridge; salt-ssh minion.bootstrap turns every harness host
// into a minion (each its own daemon, in its own namespaces, with a
// private /etc/salt); then the salt CLI drives them over ZeroMQ, through
// network cuts, a killed master and a killed minion.

// daemons is the controller's master process and the salt tools.
type daemons struct {
	t      *testing.T
	e      *env
	bin    string
	master *exec.Cmd
	log    string // the master's log file
}

func buildDaemons(t *testing.T) string {
	t.Helper()
	bin := t.TempDir()
	out, err := exec.Command("go", "build", "-o", bin+"/", "github.com/brinesalt/brine/cmd/salt-master",
		"github.com/brinesalt/brine/cmd/salt", "github.com/brinesalt/brine/cmd/salt-key",
		"github.com/brinesalt/brine/cmd/salt-run").CombinedOutput()
	if err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

func freePortOn(t *testing.T, ip string) int {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func newDaemons(t *testing.T, e *env) *daemons {
	ip := e.c.ControllerIP()
	e.writeMaster(fmt.Sprintf("interface: %s\npublish_port: %d\nret_port: %d\nsock_dir: %s/sock\n"+
		"timeout: 4\ngather_job_timeout: 3\n", ip, freePortOn(t, ip), freePortOn(t, ip), e.dir))
	d := &daemons{t: t, e: e, bin: buildDaemons(t), log: filepath.Join(e.dir, "master.log")}
	d.startMaster()
	t.Cleanup(func() {
		d.stopMaster(os.Interrupt)
		if t.Failed() {
			b, _ := os.ReadFile(d.log)
			t.Logf("--- master log ---\n%s", b)
			for _, h := range e.c.Hosts() {
				out, _ := e.c.Exec(context.Background(), h.ID, "tail -n 40 /var/log/salt/minion")
				t.Logf("--- %s minion log ---\n%s", h.ID, out)
			}
		}
	})
	return d
}

func (d *daemons) startMaster() {
	log, err := os.OpenFile(d.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		d.t.Fatal(err)
	}
	defer log.Close() // the child holds its own descriptor
	cmd := exec.Command(filepath.Join(d.bin, "salt-master"), "-c", d.e.dir, "-l", "info")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		d.t.Fatal(err)
	}
	d.master = cmd
	d.waitFor("the master's socket", func() bool {
		_, err := os.Stat(filepath.Join(d.e.dir, "sock", "brine-master.sock"))
		return err == nil
	})
}

func (d *daemons) stopMaster(sig os.Signal) {
	if d.master != nil {
		d.master.Process.Signal(sig)
		d.master.Wait()
		d.master = nil
		os.Remove(filepath.Join(d.e.dir, "sock", "brine-master.sock"))
	}
}

// salt runs one of the salt tools against the controller's master.
func (d *daemons) salt(tool string, args ...string) (string, int) {
	d.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(d.bin, tool), append([]string{"-c", d.e.dir}, args...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return out.String(), ee.ExitCode()
	} else if err != nil {
		d.t.Fatalf("%s %v: %v", tool, args, err)
	}
	return out.String(), 0
}

func (d *daemons) waitFor(what string, cond func() bool) {
	d.t.Helper()
	testhosts.Eventually(d.t, what, time.Minute, cond)
}

// pings reports the ids answering True to test.ping on tgt.
func (d *daemons) pings(tgt string) map[string]bool {
	got := d.saltJSON(tgt, "test.ping", "-t", "3")
	ids := map[string]bool{}
	for id, v := range got {
		ids[id] = v == true
	}
	return ids
}

// saltJSON runs salt with --out json and merges the per-minion
// documents it prints.
func (d *daemons) saltJSON(args ...string) map[string]any {
	d.t.Helper()
	out, _ := d.salt("salt", append(args, "--out", "json")...)
	got := map[string]any{}
	dec := json.NewDecoder(strings.NewReader(out))
	for dec.More() {
		var m map[string]any
		if dec.Decode(&m) != nil {
			break // "Minion did not return" is printed as text
		}
		for k, v := range m {
			got[k] = v
		}
	}
	return got
}

func (d *daemons) hostFile(id, path string) ([]byte, error) {
	return os.ReadFile(d.e.hostPath(id, path))
}

// lookupJID waits until the job cache holds want (a "<id>:\n    <text>"
// line) for jid.
func (d *daemons) lookupJID(jid, want string) {
	d.t.Helper()
	d.waitFor("job "+jid+" to hold "+want, func() bool {
		out, _ := d.salt("salt-run", "jobs.lookup_jid", jid)
		return strings.Contains(out, want)
	})
}

var jidRE = regexp.MustCompile(`job ID: (\d{20})`)

func (d *daemons) async(args ...string) string {
	d.t.Helper()
	out, code := d.salt("salt", append(args, "--async")...)
	m := jidRE.FindStringSubmatch(out)
	if code != 0 || m == nil {
		d.t.Fatalf("salt %v --async: %d %s", args, code, out)
	}
	return m[1]
}

// fast minion options: quick reconnects and return retries.
const fastMinion = `minion_opts={acceptance_wait_time: 1, random_reauth_delay: 1, recon_default: 200, recon_max: 1000, return_retry_timer: 1, return_retry_timer_max: 2, grains: {role: %s}}`

func bootstrapSteps(t *testing.T, got map[string]any, id string) map[string]map[string]any {
	t.Helper()
	ret, ok := got[id].(map[string]any)
	if !ok {
		t.Fatalf("bootstrap %s: no state-shaped return: %v", id, got[id])
	}
	steps := map[string]map[string]any{}
	for key, v := range ret {
		s, _ := v.(map[string]any)
		if s["result"] != true {
			t.Errorf("bootstrap %s: step %s failed: %v", id, key, s["comment"])
		}
		steps[fmt.Sprint(s["__id__"])] = s
	}
	return steps
}

func TestE2EBootstrapMinions(t *testing.T) {
	// Per-host minions need the hosts on their own addresses.
	c := testhosts.New(t, 3, testhosts.WithMode(testhosts.ModeNetns))
	e := newEnv(t, c, true)
	d := newDaemons(t, e)
	master := "master=" + c.ControllerIP()

	t.Run("bootstrap", func(t *testing.T) {
		for _, run := range []struct{ tgt, role string }{{"host1", "web"}, {"host[23]", "db"}} {
			got, code, stderr := e.saltSSH(run.tgt, "minion.bootstrap", master, fmt.Sprintf(fastMinion, run.role), "-l", "trace")
			if code != 0 {
				t.Fatalf("bootstrap %s: code %d %v\n%s", run.tgt, code, got, stderr)
			}
			if strings.Contains(stderr, "PRIVATE KEY") || strings.Contains(fmt.Sprint(got), "PRIVATE KEY") {
				t.Errorf("the private key shows in salt-ssh's output")
			}
			for id := range got {
				steps := bootstrapSteps(t, got, id)
				if ch, _ := steps["running"]["changes"].(map[string]any); len(ch) == 0 {
					t.Errorf("%s: the minion was not started: %v", id, steps["running"])
				}
				if steps["authenticated"] == nil {
					t.Errorf("%s: no sign-in step: %v", id, steps)
				}
			}
		}
		masterPub, _ := os.ReadFile(filepath.Join(e.dir, "pki", "master.pub"))
		for _, h := range c.Hosts() {
			pem, err := os.Stat(e.hostPath(h.ID, "/etc/salt/pki/minion/minion.pem"))
			if err != nil || pem.Mode().Perm() != 0o600 {
				t.Errorf("%s minion.pem: %v %v", h.ID, err, pem)
			}
			pinned, _ := d.hostFile(h.ID, "/etc/salt/pki/minion/minion_master.pub")
			if len(masterPub) == 0 || !bytes.Equal(pinned, masterPub) {
				t.Errorf("%s: minion_master.pub is not the master's key", h.ID)
			}
			hostPub, _ := d.hostFile(h.ID, "/etc/salt/pki/minion/minion.pub")
			accepted, _ := os.ReadFile(filepath.Join(e.dir, "pki", "minions", h.ID))
			if len(hostPub) == 0 || !bytes.Equal(hostPub, accepted) {
				t.Errorf("%s: the accepted key is not the host's minion.pub", h.ID)
			}
			if _, err := os.Stat(e.hostPath(h.ID, "/etc/init.d/salt-minion")); err != nil {
				t.Errorf("%s: no init script: %v", h.ID, err)
			}
		}
		if out, _ := d.salt("salt-key", "-L"); !strings.Contains(out, "Accepted Keys:\nhost1\nhost2\nhost3\n") {
			t.Errorf("salt-key -L after bootstrap:\n%s", out)
		}
	})

	t.Run("re-run changes nothing", func(t *testing.T) {
		got, code, stderr := e.saltSSH("host[23]", "minion.bootstrap", master, fmt.Sprintf(fastMinion, "db"))
		if code != 0 {
			t.Fatalf("re-run: code %d %v\n%s", code, got, stderr)
		}
		for _, id := range []string{"host2", "host3"} {
			steps := bootstrapSteps(t, got, id)
			if steps["authenticated"] == nil || steps["running"]["comment"] != "the minion is running" {
				t.Errorf("re-run on %s: %v", id, steps)
			}
			for sid, s := range steps {
				if ch, _ := s["changes"].(map[string]any); len(ch) != 0 {
					t.Errorf("re-run on %s changed %s: %v", id, sid, ch)
				}
			}
		}
	})

	t.Run("salt over zeromq", func(t *testing.T) {
		// No waiting: a bootstrap that succeeded has seen each minion
		// answer.
		if p := d.pings("*"); !p["host1"] || !p["host2"] || !p["host3"] {
			t.Fatalf("salt '*' test.ping right after the bootstrap: %v", p)
		}
		got := d.saltJSON("*", "cmd.run", "hostname")
		for _, h := range c.Hosts() {
			if got[h.ID] != h.ID {
				t.Errorf("cmd.run hostname on %s = %v (each minion runs in its own host)", h.ID, got[h.ID])
			}
		}
		got = d.saltJSON("-G", "role:web", "test.ping")
		if len(got) != 1 || got["host1"] != true {
			t.Errorf("salt -G role:web test.ping = %v", got)
		}
	})

	t.Run("network cut", func(t *testing.T) {
		ctx := context.Background()
		jid := d.async("host2", "cmd.run", "touch /tmp/started-cut; sleep 3; echo after-the-cut")
		d.waitFor("the job to start on host2", func() bool { _, err := d.hostFile("host2", "/tmp/started-cut"); return err == nil })
		if err := c.LinkDown(ctx, "host2"); err != nil {
			t.Fatal(err)
		}
		// The job ends while the link is down: its return is queued.
		time.Sleep(5 * time.Second)
		if out, _ := d.salt("salt-run", "jobs.lookup_jid", jid); strings.Contains(out, "after-the-cut") {
			t.Fatalf("a return arrived over a cut link:\n%s", out)
		}
		if err := c.LinkUp(ctx, "host2"); err != nil {
			t.Fatal(err)
		}
		d.lookupJID(jid, "host2:\n    after-the-cut")
		d.waitFor("host2 to answer again", func() bool { return d.pings("host2")["host2"] })
	})

	t.Run("master killed mid-job", func(t *testing.T) {
		jid := d.async("host3", "cmd.run", "touch /tmp/started-kill; sleep 3; echo outlived-the-master")
		d.waitFor("the job to start on host3", func() bool { _, err := d.hostFile("host3", "/tmp/started-kill"); return err == nil })
		d.stopMaster(os.Kill)
		time.Sleep(4 * time.Second) // the job ends with no master to hear it
		d.startMaster()
		d.lookupJID(jid, "host3:\n    outlived-the-master")
		d.waitFor("all minions after the restart", func() bool { p := d.pings("*"); return p["host1"] && p["host2"] && p["host3"] })
	})

	t.Run("minion killed mid-job", func(t *testing.T) {
		type result struct {
			out  string
			code int
		}
		done := make(chan result, 1)
		go func() {
			out, code := d.salt("salt", "host1", "cmd.run", "touch /tmp/started-dead; sleep 30", "-v")
			done <- result{out, code}
		}()
		d.waitFor("the job to start on host1", func() bool { _, err := d.hostFile("host1", "/tmp/started-dead"); return err == nil })
		if out, err := c.Exec(context.Background(), "host1", "kill -KILL $(cat /run/salt/salt-minion.pid)"); err != nil {
			t.Fatalf("kill the minion: %v %s", err, out)
		}
		r := <-done
		if r.code == 0 || !strings.Contains(r.out, "host1:\n    Minion did not return. [No response]") {
			t.Errorf("salt -v with a killed minion: code %d\n%s", r.code, r.out)
		}
	})

	t.Run("minion restart", func(t *testing.T) {
		if out, err := c.Exec(context.Background(), "host1", "/etc/init.d/salt-minion start"); err != nil {
			t.Fatalf("start the minion: %v %s", err, out)
		}
		d.waitFor("host1 after its restart", func() bool { return d.pings("host1")["host1"] })
	})

	t.Run("deleted key receives nothing", func(t *testing.T) {
		if out, code := d.salt("salt-key", "-d", "host2", "-y"); code != 0 {
			t.Fatalf("salt-key -d host2: %d %s", code, out)
		}
		// salt-key leaves .dfn; the master rotates its AES key when it
		// sees it (salt/master.py Maintenance), and only from then on
		// can the deleted minion read no publication.
		d.waitFor("the master to rotate its AES key", func() bool {
			_, err := os.Stat(filepath.Join(e.dir, "cache", ".dfn"))
			return os.IsNotExist(err)
		})
		got := d.saltJSON("*", "cmd.run", "touch /tmp/after-delete; echo ran")
		if got["host1"] != "ran" || got["host3"] != "ran" {
			t.Errorf("the accepted minions did not run the job: %v", got)
		}
		if _, ok := got["host2"]; ok {
			t.Errorf("host2 answered after its key was deleted: %v", got)
		}
		time.Sleep(2 * time.Second)
		if _, err := d.hostFile("host2", "/tmp/after-delete"); err == nil {
			t.Errorf("host2 ran a job published after its key was deleted")
		}
	})

	t.Run("a rejected key fails that host alone, and bootstrap after delete", func(t *testing.T) {
		// host2's minion, its key deleted, asked again and is pending.
		d.waitFor("host2 pending", func() bool {
			out, _ := d.salt("salt-key", "-l", "unaccepted")
			return strings.Contains(out, "host2")
		})
		if out, code := d.salt("salt-key", "-r", "host2", "-y"); code != 0 {
			t.Fatalf("salt-key -r host2: %d %s", code, out)
		}
		got, code, _ := e.saltSSH("host[12]", "minion.bootstrap", master, fmt.Sprintf(fastMinion, "web"))
		if code == 0 {
			t.Errorf("a failed host must make the run fail: %v", got)
		}
		bootstrapSteps(t, got, "host1")
		failed, _ := got["host2"].(map[string]any)
		if !strings.Contains(fmt.Sprint(failed), "salt-key -d host2") {
			t.Errorf("host2 with a rejected key: %v", got["host2"])
		}
		if out, code := d.salt("salt-key", "-d", "host2", "-y"); code != 0 {
			t.Fatalf("salt-key -d host2: %d %s", code, out)
		}
		got, code, stderr := e.saltSSH("host2", "minion.bootstrap", master, fmt.Sprintf(fastMinion, "db"))
		if code != 0 {
			t.Fatalf("bootstrap after delete: %d %v\n%s", code, got, stderr)
		}
		if steps := bootstrapSteps(t, got, "host2"); steps["accepted key"]["comment"] != "the host's existing key accepted" {
			t.Errorf("bootstrap after delete: %v", steps["accepted key"])
		}
		if p := d.pings("host2"); !p["host2"] {
			t.Errorf("host2 after its bootstrap: %v", p)
		}
	})

	t.Run("a minion that cannot start fails with its log", func(t *testing.T) {
		got, code, _ := e.saltSSH("host3", "minion.bootstrap", master, "minion_opts={master_port: notanumber}")
		if code == 0 {
			t.Fatalf("a broken config was reported as a success: %v", got)
		}
		ret, _ := got["host3"].(map[string]any)
		var running map[string]any
		for _, v := range ret {
			if s, _ := v.(map[string]any); s["__id__"] == "running" {
				running = s
			}
		}
		if running["result"] != false || !strings.Contains(fmt.Sprint(running["comment"]), `/etc/salt/minion: master_port: want a number, got "notanumber"`) {
			t.Errorf("running step: %v", running)
		}
	})
}
