package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/testsupport/clustertest"
)

// TestMultiMasterProcesses runs two real salt-master processes sharing
// one key pair and real salt-minion processes: a hot minion answers
// both, keeps answering B while A is killed (SIGKILL) in the middle of
// a job, and A gets that job's return once it is back; a failover
// minion moves from a frozen master (SIGSTOP: the connections stay
// open, nothing answers) to the other one, and the time it takes is
// logged (docs/TOPOLOGY.md records it).
func TestMultiMasterProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemons")
	}
	a := clustertest.New(t, "auto_accept: True")
	b := clustertest.NewSetup(t, clustertest.Setup{MasterConf: "auto_accept: True", Bin: a.Bin})
	// The tutorial's shared key: B gets A's master.pem/master.pub.
	b.StopMaster()
	for _, f := range []string{"master.pem", "master.pub"} {
		data, err := os.ReadFile(filepath.Join(a.Dir, "master/pki", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(b.Dir, "master/pki", f), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	b.StartMaster()
	masters := fmt.Sprintf("[127.0.0.1:%d, 127.0.0.1:%d]", a.RetPort(), b.RetPort())
	hot := minionDir(t, a.Dir, "hot1", "master: "+masters)
	a.StartMinion("hot1", hot)
	a.PingUntil("hot1", "hot1")
	b.PingUntil("hot1", "hot1")

	out, code := a.Run("salt", "hot1", "test.sleep", "3", "--async")
	jid := regexp.MustCompile(`\d{20}`).FindString(out)
	if code != 0 || jid == "" {
		t.Fatalf("async publish: exit %d: %s", code, out)
	}
	if err := syscall.Kill(a.MasterPID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	a.StopMaster() // reaps it
	b.PingUntil("hot1", "hot1")
	time.Sleep(4 * time.Second) // the job ends while A is down
	a.StartMaster()
	a.WaitFor("the return made while A was down", func() bool {
		out, _ := a.Run("salt-run", "jobs.lookup_jid", jid)
		return strings.Contains(out, "hot1:\n    True")
	})
	if out, _ := b.Run("salt-run", "jobs.lookup_jid", jid); strings.Contains(out, "hot1") {
		t.Fatalf("master B holds A's job:\n%s", out)
	}

	fo := minionDir(t, a.Dir, "fo1", "master: "+masters+"\nmaster_type: failover\nmaster_alive_interval: 2\nauth_timeout: 2\nauth_tries: 1")
	a.StartMinion("fo1", fo)
	a.PingUntil("fo1", "fo1")
	pid := a.MasterPID()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(pid, syscall.SIGCONT)
	start := time.Now()
	b.PingUntil("fo1", "fo1")
	t.Logf("failover from a frozen master: fo1 answered the other master %s after SIGSTOP (master_alive_interval 2, auth_timeout 2; includes salt's own -t 2 rounds)",
		time.Since(start).Round(100*time.Millisecond))
	syscall.Kill(pid, syscall.SIGCONT)
}

// minionDir writes a minion config of its own (pki, cache) under dir.
func minionDir(t *testing.T, dir, id, extra string) string {
	t.Helper()
	d := filepath.Join(dir, "minion-"+id)
	if err := os.MkdirAll(d, 0o700); err != nil {
		t.Fatal(err)
	}
	conf := fmt.Sprintf("id: %s\npki_dir: %s/pki\ncachedir: %s/cache\nacceptance_wait_time: 1\nrandom_reauth_delay: 1\n"+
		"recon_default: 200\nrecon_max: 500\nreturn_retry_timer: 1\nreturn_retry_timer_max: 2\n%s\n", id, d, d, extra)
	if err := os.WriteFile(filepath.Join(d, "minion"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	return d
}
