package testhosts

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// helperEnv names the variable under which a test re-runs this test binary
// as another user to do one thing (see HelperMain).
const helperEnv = "BRINE_TESTHOSTS_HELPER"

// HelperMain does what helperEnv asks of this test binary, when it is set,
// and reports its exit code; TestMain calls it before running any test.
//
//	foreign-teardown:C  as a harness without root would on closing or
//	                    sweeping its own cluster C: Cleanup, then teardown
//	                    of C with an empty work directory.
func HelperMain() (code int, ok bool) {
	v := os.Getenv(helperEnv)
	if v == "" {
		return 0, false
	}
	c, found := strings.CutPrefix(v, "foreign-teardown:")
	if !found {
		fmt.Fprintf(os.Stderr, "unknown %s=%s\n", helperEnv, v)
		return 2, true
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	dir, err := os.MkdirTemp("", "brine-foreign-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1, true
	}
	defer os.RemoveAll(dir)
	if err := Cleanup(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "cleanup:", err)
	}
	if err := teardown(ctx, atoi(c), filepath.Join(dir, "c")); err != nil {
		fmt.Fprintln(os.Stderr, "teardown:", err)
	}
	fmt.Println("helper done")
	return 0, true
}

// CopyTestBinary copies this test binary into a fresh directory that every
// user can read, for re-running it as the login user, and returns its path.
func CopyTestBinary(t testing.TB) string {
	t.Helper()
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
	in, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return bin
}

// AsUser returns a command running bin with args as user u, who exists
// only for it: the command runs in a private mount namespace whose
// /etc/passwd and /etc/group are copies of the machine's with u's lines
// added (as the hosts' are, see writeOverlays), and u's home is dir, owned
// by u. The machine's accounts are not touched.
func AsUser(t testing.TB, u loginUser, dir string, bin string, args ...string) *exec.Cmd {
	t.Helper()
	u.Home = dir
	acct := t.TempDir()
	fs, err := os.OpenRoot(acct)
	if err != nil {
		t.Fatal(err)
	}
	defer fs.Close()
	var mounts strings.Builder
	for _, af := range accountFiles[:2] { // passwd, group
		if err := writeAccountFile(fs, "/etc/"+af.name, af.name, af.mode, u.Name, af.line(u)); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&mounts, "mount --bind %s /etc/%s\n", shq(filepath.Join(acct, af.name)), af.name)
	}
	if err := os.Chown(dir, u.UID, u.GID); err != nil {
		t.Fatal(err)
	}
	script := mounts.String() + fmt.Sprintf("exec setpriv --reuid=%d --regid=%d --clear-groups \"$@\"\n", u.UID, u.GID)
	cmd := exec.CommandContext(t.Context(), "unshare", append([]string{"--mount", "--propagation", "private",
		"sh", "-ec", script, "sh", bin}, args...)...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "HOME=" + dir, "USER=" + u.Name}
	return cmd
}

// LoginUser is the login user an isolated cluster of DefaultUser gets.
func LoginUser(t testing.TB) loginUser {
	u, err := privateUser(t.Context(), DefaultUser, DefaultPassword)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
