package testhosts

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestUnprivilegedLeavesRootClustersAlone: a harness running without root
// (TestUnprivileged, or a developer's shell) numbers its clusters in its
// own directory, so its cluster C is not root's cluster C. Closing it, or
// sweeping stale objects, once signalled every process in root's
// brth<C>-* namespaces that it was allowed to, that is every session of the
// shared login user, killing a live cluster's remote command with SIGTERM.
func TestUnprivilegedLeavesRootClustersAlone(t *testing.T) {
	RequireNetns(t, "root's clusters are what is at stake")
	ctx := t.Context()
	c := New(t, 1, WithMode(ModeNetns))
	u := c.st.User
	out, err := c.Exec(ctx, "host1", fmt.Sprintf(
		"setpriv --reuid=%d --regid=%d --clear-groups sleep 600 </dev/null >/dev/null 2>&1 & echo $!", u.UID, u.GID))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("pid of the session: %q", out)
	}
	session, err := refOf(pid)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { session.signal(syscall.SIGKILL) })

	bin := CopyTestBinary(t)
	cmd := AsUser(t, u, filepath.Dir(bin), bin, "-test.run", "^$")
	cmd.Env = append(cmd.Env, fmt.Sprintf("%s=foreign-teardown:%d", helperEnv, c.st.Cluster))
	b, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(b), "helper done") {
		t.Fatalf("helper as %s: %v\n%s", u.Name, err, b)
	}
	if !session.alive() {
		t.Errorf("the login user's process in root's cluster %d was killed by a harness without root", c.st.Cluster)
	}
	if out, err := c.Exec(ctx, "host1", "hostname"); err != nil || string(out) != "host1\n" {
		t.Errorf("root's cluster broken: %q, %v", out, err)
	}
}
