package testhosts_test

import (
	"errors"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brinesalt/brine/internal/testsupport/testhosts"
)

// TestUnprivileged checks the fallback without root: plain loopback sshd
// processes of the current user. As root it re-runs itself as the login user.
func TestUnprivileged(t *testing.T) {
	if os.Geteuid() == 0 {
		runAsLoginUser(t)
		return
	}
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := testhosts.Start(t.Context(), testhosts.Config{N: 1,
		Defaults: testhosts.HostOptions{NoPython: true}}); !errors.Is(err, testhosts.ErrUnsupported) {
		t.Errorf("NoPython without root: %v, want ErrUnsupported", err)
	}
	c := testhosts.New(t, 2, testhosts.WithMode(testhosts.ModeLoopback))
	if c.Isolated() || c.Mode() != testhosts.ModeLoopback {
		t.Fatalf("isolated=%v mode=%s, want an unisolated loopback cluster", c.Isolated(), c.Mode())
	}
	for _, h := range c.Hosts() {
		if got := mustRun(t, dial(t, c, h.ID, me.Username), "id -un"); got != me.Username {
			t.Errorf("%s: id -un = %q, want %q", h.ID, got, me.Username)
		}
	}
	if out, err := c.Exec(t.Context(), "host1", "id -un"); err != nil || strings.TrimSpace(string(out)) != me.Username {
		t.Errorf("Exec: %q, %v", out, err)
	}
	if _, err := c.HostPath("host1", "/tmp"); !errors.Is(err, testhosts.ErrUnsupported) {
		t.Errorf("HostPath: %v, want ErrUnsupported", err)
	}
}

func runAsLoginUser(t *testing.T) {
	u := testhosts.LoginUser(t)
	bin := testhosts.CopyTestBinary(t)
	cmd := testhosts.AsUser(t, u, filepath.Dir(bin), bin, "-test.run", "^TestUnprivileged$", "-test.v", "-test.count=1")
	out, err := cmd.CombinedOutput()
	t.Logf("as %s:\n%s", testhosts.DefaultUser, out)
	if err != nil || !strings.Contains(string(out), "--- PASS: TestUnprivileged") {
		t.Fatalf("unprivileged run: %v", err)
	}
}
