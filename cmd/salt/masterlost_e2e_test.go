package main

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/testsupport/clustertest"
)

// TestMasterLostMidJob stops the master while salt waits for a job: the
// CLI must say the master is gone (Salt's SaltClientError message,
// status 0 as salt/cli/salt.py ends run() without sys.exit) rather than
// report every minion as not returning, and the return must still be
// in the job cache once the master is back.
func TestMasterLostMidJob(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemons")
	}
	c := clustertest.New(t, "auto_accept: True")
	c.StartMinion("m1", c.MinionConf("m1", "m1", ""))
	c.PingUntil("m1", "m1")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(c.Bin, "salt"), "-c", filepath.Join(c.Dir, "master"), "m1", "test.sleep", "3", "-t", "30")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c.WaitFor("job published", func() bool { return strings.Contains(c.Logs["master"].String(), "fun=test.sleep") })
	c.StopMaster()
	err := cmd.Wait()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	jid := regexp.MustCompile(`job (\d{20})`).FindStringSubmatch(stderr.String())
	// Which of Salt's two messages depends on whether the master's
	// socket is already gone when the CLI looks.
	gone := strings.Contains(stdout.String(), "The salt master could not be contacted. Is master running?") ||
		strings.Contains(stdout.String(), "Salt request timed out. The master is not responding.")
	if code != 0 || !gone ||
		strings.Contains(stdout.String(), "Minion did not return") || jid == nil ||
		!strings.Contains(stderr.String(), "the connection to the master was lost") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	c.StartMaster()
	c.WaitFor("the queued return", func() bool {
		out, _ := c.Run("salt-run", "jobs.lookup_jid", jid[1])
		return strings.Contains(out, "m1:\n    True")
	})
}
