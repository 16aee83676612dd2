package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/testsupport/clustertest"
)

func TestEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemons")
	}
	c := clustertest.New(t, "")
	c.StartMinion("m1", c.MinionConf("m1", "m1", "grains: {role: web}\n"+returnerConf(c.Dir)))
	c.StartMinion("m2", c.MinionConf("m2", "m2", "grains: {role: db}"))

	t.Run("pending then accepted", func(t *testing.T) {
		c.WaitFor("pending keys", func() bool {
			out, _ := c.Run("salt-key", "-L")
			return strings.Contains(out, "Unaccepted Keys:\nm1\nm2\n")
		})
		if out, code := c.Run("salt-key", "-a", "m1", "-y"); code != 0 {
			t.Fatalf("salt-key -a: %d %s", code, out)
		}
		c.PingUntil("m1", "m1")
		if out, code := c.Run("salt-key", "-A", "-y"); code != 0 {
			t.Fatalf("salt-key -A: %d %s", code, out)
		}
		c.PingUntil("*", "m1", "m2")
		pub, _ := os.ReadFile(filepath.Join(c.Dir, "minion-m1/pki/minion_master.pub"))
		master, _ := os.ReadFile(filepath.Join(c.Dir, "master/pki/master.pub"))
		if len(pub) == 0 || !bytes.Equal(bytes.TrimSpace(pub), bytes.TrimSpace(master)) {
			t.Fatalf("minion_master.pub not pinned to master.pub")
		}
		for _, f := range []struct {
			name string
			mode os.FileMode
		}{{"minion.pem", 0o077}, {"minion.pub", 0o133}} {
			// Salt writes minion.pem 0400 and minion.pub 0644: the
			// private key is readable by its owner only.
			st, err := os.Stat(filepath.Join(c.Dir, "minion-m1/pki", f.name))
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
			{[]string{"m1", "cp.get_file_str", "salt://hello.txt"}, []string{"m1:\n    hello from the master"}, nil},
		} {
			out, _ := c.Run("salt", tc.args...)
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
		out, code := c.Run("salt", "*", "test.sleep", "1", "--async")
		m := regexp.MustCompile(`Executed command with job ID: (\d{20})`).FindStringSubmatch(out)
		if code != 0 || m == nil {
			t.Fatalf("--async: %d %q", code, out)
		}
		c.WaitFor("lookup_jid", func() bool {
			out, _ := c.Run("salt-run", "jobs.lookup_jid", m[1])
			return strings.Contains(out, "m1:\n    True") && strings.Contains(out, "m2:\n    True")
		})
		out, _ = c.Run("salt-run", "jobs.list_jobs")
		if !strings.Contains(out, m[1]+":") || !strings.Contains(out, "test.sleep") {
			t.Fatalf("list_jobs:\n%s", out)
		}
	})

	t.Run("active jobs and the event bus", func(t *testing.T) {
		st, err := os.Stat(filepath.Join(c.Dir, "master/sock/brine-master.sock"))
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("local socket: %v %v", err, st)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		ev := exec.CommandContext(ctx, filepath.Join(c.Bin, "salt-run"), "-c", filepath.Join(c.Dir, "master"),
			"state.event", "pretty=True", "tagmatch=salt/job/*", "count=3")
		var evOut clustertest.SyncBuffer
		ev.Stdout = &evOut
		if err := ev.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(500 * time.Millisecond)
		out, _ := c.Run("salt", "m1", "test.sleep", "3", "--async")
		jid := regexp.MustCompile(`\d{20}`).FindString(out)
		out, _ = c.Run("salt-run", "jobs.active")
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
		out, _ := c.Run("salt", "m2", "test.sleep", "30", "--async")
		jid := regexp.MustCompile(`\d{20}`).FindString(out)
		c.WaitFor("job running", func() bool {
			out, _ := c.Run("salt", "m2", "saltutil.find_job", jid)
			return strings.Contains(out, "test.sleep")
		})
		out, _ = c.Run("salt", "m2", "saltutil.kill_job", jid)
		if !strings.Contains(out, "Signal 9 sent to job "+jid) {
			t.Fatalf("kill_job:\n%s", out)
		}
		out, _ = c.Run("salt", "m2", "saltutil.find_job", jid)
		if strings.Contains(out, "test.sleep") {
			t.Fatalf("job still running:\n%s", out)
		}
	})

	t.Run("long job outlives the timeout", func(t *testing.T) {
		out, code := c.Run("salt", "m1", "test.sleep", "5", "-t", "1")
		if code != 0 || !strings.Contains(out, "m1:\n    True") {
			t.Fatalf("find_job did not keep the job alive: %d\n%s", code, out)
		}
	})

	t.Run("batch", func(t *testing.T) {
		out, code := c.Run("salt", "*", "test.ping", "-b", "1")
		if code != 0 || !strings.Contains(out, "Executing run on ['m1']") || !strings.Contains(out, "Executing run on ['m2']") {
			t.Fatalf("batch: %d\n%s", code, out)
		}
		out, code = c.Run("salt", "*", "test.ping", "-b", "50%", "--batch-wait", "0.2")
		if code != 0 || strings.Count(out, "    True") != 2 {
			t.Fatalf("batch 50%%: %d\n%s", code, out)
		}
	})

	t.Run("returners", func(t *testing.T) { testReturners(t, c) })
	t.Run("progress", func(t *testing.T) { testProgress(t, c) })
	t.Run("subset", func(t *testing.T) { testSubset(t, c) })
	t.Run("output options", func(t *testing.T) { testOutputOptions(t, c) })

	t.Run("manage", func(t *testing.T) {
		out, _ := c.Run("salt-run", "manage.status")
		if !strings.Contains(out, "up:\n    - m1\n    - m2") {
			t.Fatalf("manage.status:\n%s", out)
		}
	})

	t.Run("rejected and duplicate keys receive nothing", func(t *testing.T) {
		c.StartMinion("m3", c.MinionConf("m3", "m3", ""))
		c.WaitFor("m3 pending", func() bool {
			out, _ := c.Run("salt-key", "-l", "un")
			return strings.Contains(out, "m3")
		})
		c.Run("salt-key", "-r", "m3", "-y")
		// A second minion claiming m1 with another key.
		c.StartMinion("m1-impostor", c.MinionConf("m1", "impostor", ""))
		c.WaitFor("impostor denied", func() bool {
			out, _ := c.Run("salt-key", "-L")
			return strings.Contains(out, "Denied Keys:\nm1")
		})
		out, _ := c.Run("salt", "*", "test.ping", "-t", "2")
		if strings.Contains(out, "m3") || strings.Count(out, "m1:") != 1 {
			t.Fatalf("ping:\n%s", out)
		}
		if strings.Contains(c.Logs["m3"].String(), "authenticated with the master") {
			t.Fatalf("rejected minion authenticated")
		}
		if strings.Contains(c.Logs["m1-impostor"].String(), "authenticated with the master") {
			t.Fatalf("impostor authenticated")
		}
	})

	t.Run("aes rotation on key delete", func(t *testing.T) {
		c.Run("salt-key", "-d", "m3", "-y")
		c.WaitFor("rotation", func() bool { return strings.Count(c.Logs["master"].String(), "AES key rotated") >= 2 })
		c.PingUntil("*", "m1", "m2")
	})

	t.Run("master restart with a queued return", func(t *testing.T) {
		out, _ := c.Run("salt", "m1", "test.sleep", "3", "--async")
		jid := regexp.MustCompile(`\d{20}`).FindString(out)
		time.Sleep(500 * time.Millisecond)
		c.StopMaster()
		time.Sleep(4 * time.Second) // the return is queued while the master is down
		c.StartMaster()
		c.WaitFor("queued return", func() bool {
			out, _ := c.Run("salt-run", "jobs.lookup_jid", jid)
			return strings.Contains(out, "m1:\n    True")
		})
		c.PingUntil("*", "m1", "m2")
	})

	t.Run("changed master key refused", func(t *testing.T) {
		dir := c.MinionConf("m4", "m4", "")
		os.MkdirAll(filepath.Join(dir, "pki"), 0o700)
		if out, code := c.Run("salt-key", "--gen-keys", "other", "--gen-keys-dir", filepath.Join(dir, "pki")); code != 0 {
			t.Fatalf("gen-keys: %s", out)
		}
		os.Rename(filepath.Join(dir, "pki/other.pub"), filepath.Join(dir, "pki/minion_master.pub"))
		c.Run("salt-key", "-a", "m4", "-y")
		cmd := c.StartMinion("m4", dir)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		// Accept m4 once it signs in, so the master answers with its key.
		c.WaitFor("m4 pending", func() bool {
			c.Run("salt-key", "-a", "m4", "-y")
			out, _ := c.Run("salt-key", "-l", "acc")
			return strings.Contains(out, "m4")
		})
		select {
		case err := <-done:
			delete(c.Minions, "m4")
			ee, ok := err.(*exec.ExitError)
			if !ok || ee.ExitCode() != 2 || !strings.Contains(c.Logs["m4"].String(), "master key has changed") {
				t.Fatalf("minion with another master key: %v\n%s", err, c.Logs["m4"])
			}
		case <-time.After(30 * time.Second):
			t.Fatal("minion trusted a master with a different key")
		}
	})

	t.Run("silent minion", func(t *testing.T) { testSilentMinion(t, c) })
}
