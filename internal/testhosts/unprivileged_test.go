package testhosts_test

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brinesalt/brine/internal/testhosts"
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
	c := testhosts.New(t, 2)
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
	if _, err := user.Lookup(testhosts.DefaultUser); err != nil {
		testhosts.New(t, 1) // creates the login user
	}
	dir, err := os.MkdirTemp("", "brine-unprivileged-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "testhosts.test")
	if err := copyFile(self, bin); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), "runuser", "-u", testhosts.DefaultUser, "--",
		bin, "-test.run", "^TestUnprivileged$", "-test.v", "-test.count=1")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "HOME=/home/" + testhosts.DefaultUser}
	out, err := cmd.CombinedOutput()
	t.Logf("as %s:\n%s", testhosts.DefaultUser, out)
	if err != nil || !strings.Contains(string(out), "--- PASS: TestUnprivileged") {
		t.Fatalf("unprivileged run: %v", err)
	}
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
