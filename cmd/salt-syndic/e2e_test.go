package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/testsupport/clustertest"
)

// tree is a two-tier syndic tree on loopback: a top master (order_masters)
// with one direct minion, and lower masters each with their minions and
// a salt-syndic whose syndic_master is the top.
type tree struct {
	t     *testing.T
	top   *clustertest.Cluster
	lower map[string]*clustertest.Cluster // by syndic id
}

func newTree(t *testing.T) *tree {
	top := clustertest.NewSetup(t, clustertest.Setup{MasterConf: topConf, Tools: []string{"salt-syndic", "salt-cp"}})
	return treeOn(t, top)
}

// topConf makes a master the top of a tree.
const topConf = "order_masters: True\nsyndic_wait: 2\n"

// treeOn is a tree whose top master is top (built with salt-syndic).
func treeOn(t *testing.T, top *clustertest.Cluster) *tree {
	return &tree{t: t, top: top, lower: map[string]*clustertest.Cluster{}}
}

// addTier starts a lower master with the given minions (id → grains
// YAML) and its syndic, id syndicID, under the top.
func (tr *tree) addTier(syndicID string, minions map[string]string) *clustertest.Cluster {
	l := clustertest.NewSetup(tr.t, clustertest.Setup{Bin: tr.top.Bin})
	for id, grains := range minions {
		l.StartMinion(id, l.MinionConf(id, id, "grains: "+grains))
	}
	tr.lower[syndicID] = l
	tr.startSyndic(l, syndicID, tr.top.RetPort(), "")
	return l
}

// startSyndic starts salt-syndic on lower l's master with syndic_master
// 127.0.0.1:port; its process is stopped with l's minions.
func (tr *tree) startSyndic(l *clustertest.Cluster, id string, port int, extra string) (*exec.Cmd, string) {
	dir := filepath.Join(l.Dir, "syndic-"+id)
	os.MkdirAll(dir, 0o700)
	mconf, err := os.ReadFile(filepath.Join(l.Dir, "master/master"))
	if err != nil {
		tr.t.Fatal(err)
	}
	conf := fmt.Sprintf("%s\nsyndic_master: 127.0.0.1\nsyndic_master_port: %d\nsyndic_log_file: %s/syndic.log\nsyndic_event_forward_timeout: 0.2\n%s",
		mconf, port, dir, extra)
	os.WriteFile(filepath.Join(dir, "master"), []byte(conf), 0o600)
	os.WriteFile(filepath.Join(dir, "minion"), []byte(fmt.Sprintf("id: %s\npki_dir: %s/pki\nacceptance_wait_time: 1\nrecon_default: 200\nrecon_max: 500\nreturn_retry_timer: 1\nreturn_retry_timer_max: 2\n", id, dir)), 0o600)
	cmd := exec.Command(filepath.Join(tr.top.Bin, "salt-syndic"), "-c", dir, "-l", "info")
	buf := &clustertest.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = buf, buf
	if err := cmd.Start(); err != nil {
		tr.t.Fatal(err)
	}
	l.Minions["syndic-"+id], l.Logs["syndic-"+id] = cmd, buf
	return cmd, dir
}

func accept(t *testing.T, c *clustertest.Cluster, ids ...string) {
	t.Helper()
	c.WaitFor("pending keys "+strings.Join(ids, ","), func() bool {
		out, _ := c.Run("salt-key", "-L")
		for _, id := range ids {
			if !strings.Contains(out, id+"\n") {
				return false
			}
		}
		return true
	})
	if out, code := c.Run("salt-key", "-A", "-y"); code != 0 {
		t.Fatalf("salt-key -A: %d %s", code, out)
	}
}

func answered(out string, ids ...string) bool {
	for _, id := range ids {
		if !strings.Contains(out, id+":\n    True") {
			return false
		}
	}
	return true
}

func TestSyndicTree(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemons")
	}
	tr := newTree(t)
	top := tr.top
	top.StartMinion("direct1", top.MinionConf("direct1", "direct1", "grains: {role: web}"))
	l1 := tr.addTier("syn1", map[string]string{"l1a": "{role: web}", "l1b": "{role: db}"})
	l2 := tr.addTier("syn2", map[string]string{"l2a": "{role: db}"})
	accept(t, l1, "l1a", "l1b")
	accept(t, l2, "l2a")
	accept(t, top, "direct1", "syn1", "syn2")
	all := []string{"direct1", "l1a", "l1b", "l2a"}
	top.PingUntil("*", all...)

	t.Run("targeting across tiers", func(t *testing.T) {
		for _, tc := range []struct {
			args []string
			want []string
			not  []string
		}{
			{[]string{"*", "test.ping"}, all, []string{"syn1", "syn2"}},
			{[]string{"-G", "role:web", "test.ping"}, []string{"direct1", "l1a"}, []string{"l1b", "l2a"}},
			{[]string{"-C", "G@role:db and not l1b", "test.ping"}, []string{"l2a"}, []string{"l1a", "l1b", "direct1"}},
			{[]string{"-L", "l1b,l2a", "test.ping"}, []string{"l1b", "l2a"}, []string{"l1a", "direct1"}},
			{[]string{"l2*", "test.ping", "-t", "1"}, []string{"l2a"}, []string{"l1a"}},
		} {
			out, code := top.Run("salt", tc.args...)
			if code != 0 || !answered(out, tc.want...) {
				t.Errorf("salt %v: rc %d, want %v in\n%s", tc.args, code, tc.want, out)
			}
			for _, n := range tc.not {
				if strings.Contains(out, n+":") {
					t.Errorf("salt %v: %s should not answer:\n%s", tc.args, n, out)
				}
			}
		}
	})

	t.Run("summary counts every tier", func(t *testing.T) {
		out, code := top.Run("salt", "*", "test.ping", "--summary")
		if code != 0 || !strings.Contains(out, "# of minions targeted: 4") || !strings.Contains(out, "# of minions returned: 4") {
			t.Errorf("rc %d\n%s", code, out)
		}
	})

	t.Run("no match anywhere", func(t *testing.T) {
		out, code := top.Run("salt", "nobody*", "test.ping")
		if code != 0 || strings.TrimSpace(out) != "" {
			t.Errorf("rc %d, want an empty result:\n%q", code, out)
		}
	})

	t.Run("async and the top's job cache", func(t *testing.T) {
		out, code := top.Run("salt", "*", "test.echo", "hi", "--async")
		m := regexp.MustCompile(`job ID: (\d+)`).FindStringSubmatch(out)
		if code != 0 || m == nil {
			t.Fatalf("rc %d\n%s", code, out)
		}
		top.WaitFor("lookup_jid", func() bool {
			out, _ := top.Run("salt-run", "jobs.lookup_jid", m[1])
			for _, id := range all {
				if !strings.Contains(out, id+":\n    hi") {
					return false
				}
			}
			return true
		})
		out, _ = top.Run("salt-run", "jobs.list_job", m[1])
		for _, id := range append(all, "syn1", "syn2") {
			if !strings.Contains(out, "- "+id+"\n") {
				t.Errorf("list_job misses %s:\n%s", id, out)
			}
		}
		if _, err := os.Stat(filepath.Join(top.Dir, "master/cache/syndics/syn1")); err != nil {
			t.Errorf("syndic marker: %v", err)
		}
	})

	t.Run("batches across tiers", func(t *testing.T) {
		out, code := top.Run("salt", "*", "test.ping", "--batch", "2")
		for _, id := range all {
			if !strings.Contains(out, id+":\n    True") && !strings.Contains(out, id+": True") {
				t.Errorf("batch misses %s (rc %d):\n%s", id, code, out)
			}
		}
	})

	t.Run("salt-cp through a syndic", func(t *testing.T) {
		src := filepath.Join(t.TempDir(), "hello.txt")
		os.WriteFile(src, []byte("through the syndic\n"), 0o600)
		dest := filepath.Join(l1.Dir, "copied.txt")
		out, code := top.Run("salt-cp", "l1a", src, dest)
		got, err := os.ReadFile(dest)
		if code != 0 || err != nil || string(got) != "through the syndic\n" {
			t.Errorf("salt-cp rc %d, %v %q:\n%s", code, err, got, out)
		}
	})

	t.Run("manage.status sees every tier", func(t *testing.T) {
		out, _ := top.Run("salt-run", "manage.up")
		for _, id := range all {
			if !strings.Contains(out, "- "+id) {
				t.Errorf("manage.up misses %s:\n%s", id, out)
			}
		}
	})

	t.Run("upper master down: returns queued", func(t *testing.T) {
		out, code := top.Run("salt", "l1a", "test.sleep", "3", "--async")
		m := regexp.MustCompile(`job ID: (\d+)`).FindStringSubmatch(out)
		if code != 0 || m == nil {
			t.Fatalf("rc %d\n%s", code, out)
		}
		l1.WaitFor("the job on the lower master", func() bool {
			out, _ := l1.Run("salt-run", "jobs.list_job", m[1])
			return strings.Contains(out, "test.sleep")
		})
		// The top goes away before l1a returns: the syndic keeps the
		// return and delivers it once the top is back.
		top.StopMaster()
		l1.WaitFor("l1a's return on the lower master", func() bool {
			out, _ := l1.Run("salt-run", "jobs.lookup_jid", m[1])
			return strings.Contains(out, "l1a:\n    True")
		})
		time.Sleep(2 * time.Second) // a send or two fails meanwhile
		top.StartMaster()
		top.WaitFor("the queued return at the top", func() bool {
			out, _ := top.Run("salt-run", "jobs.lookup_jid", m[1])
			return strings.Contains(out, "l1a:\n    True")
		})
		// Every tier signs in again to the restarted top.
		top.PingUntil("*", all...)
	})

	t.Run("syndic stopped mid-job", func(t *testing.T) {
		type result struct {
			out  string
			code int
		}
		done := make(chan result)
		go func() {
			out, code := top.Run("salt", "*", "test.sleep", "2")
			done <- result{out, code}
		}()
		time.Sleep(700 * time.Millisecond)
		syn := l2.Minions["syndic-syn2"]
		syn.Process.Signal(os.Interrupt)
		syn.Wait()
		r := <-done
		if r.code != 1 || !strings.Contains(r.out, "l2a:\n    Minion did not return. [No response]") || !answered(r.out, "direct1", "l1a", "l1b") {
			t.Errorf("rc %d\n%s", r.code, r.out)
		}
		cmd, _ := tr.startSyndic(l2, "syn2", top.RetPort(), "")
		l2.Minions["syndic-syn2"] = cmd
		top.PingUntil("*", all...)
	})
}

func TestSyndicFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemons")
	}
	tr := newTree(t)
	top := tr.top
	l1 := tr.addTier("syn1", map[string]string{"l1a": "{role: web}"})
	accept(t, l1, "l1a")
	accept(t, top, "syn1")
	top.PingUntil("*", "l1a")

	t.Run("rogue syndic gets nothing", func(t *testing.T) {
		l3 := clustertest.NewSetup(t, clustertest.Setup{Bin: top.Bin})
		l3.StartMinion("l3a", l3.MinionConf("l3a", "l3a", ""))
		accept(t, l3, "l3a")
		tr.startSyndic(l3, "rogue", top.RetPort(), "")
		top.WaitFor("rogue pending", func() bool {
			out, _ := top.Run("salt-key", "-L")
			return strings.Contains(out, "Unaccepted Keys:\nrogue\n")
		})
		out, _ := top.Run("salt", "*", "test.ping")
		if strings.Contains(out, "l3a") || !answered(out, "l1a") {
			t.Errorf("rogue tier answered:\n%s", out)
		}
		jobs, _ := l3.Run("salt-run", "jobs.list_jobs")
		if strings.Contains(jobs, "test.ping") {
			t.Errorf("the rogue syndic relayed a job:\n%s", jobs)
		}
	})

	t.Run("syndic_master is its own master", func(t *testing.T) {
		cmd, dir := tr.startSyndic(l1, "self", l1.RetPort(), "")
		err := cmd.Wait()
		delete(l1.Minions, "syndic-self")
		ee, ok := err.(*exec.ExitError)
		if !ok || ee.ExitCode() != 2 || !strings.Contains(l1.Logs["syndic-self"].String(), "own master") {
			t.Errorf("exit %v, log:\n%s", err, l1.Logs["syndic-self"].String())
		}
		if log, _ := os.ReadFile(filepath.Join(dir, "syndic.log")); !strings.Contains(string(log), "own master") {
			t.Errorf("syndic_log_file:\n%s", log)
		}
	})

	t.Run("loop through a lower master refused", func(t *testing.T) {
		// A syndic on the top whose syndic_master is l1, which is below
		// the top: a job of the top comes back through l1.
		tr.startSyndic(top, "loop", l1.RetPort(), "")
		accept(t, l1, "loop")
		top.WaitFor("the loop refused", func() bool {
			top.Run("salt", "*", "test.ping", "-t", "1")
			return strings.Contains(top.Logs["syndic-loop"].String(), "syndic loop")
		})
		out, _ := top.Run("salt", "*", "test.ping")
		if strings.Count(out, "l1a:") != 1 {
			t.Errorf("l1a answered other than once:\n%s", out)
		}
	})
}
