package pkgtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Accounts writes etc/passwd, etc/group and etc/shadow under a temporary
// root for the user and group modules' Root, and returns that root.
func Accounts(t testing.TB, passwd, group, shadow string) string {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{"passwd": passwd, "group": group, "shadow": shadow} {
		if err := os.WriteFile(filepath.Join(root, "etc", name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// privateEnv names the test that a test binary re-run by InPrivateAccounts
// is to run for real.
const privateEnv = "BRINE_PKGTEST_PRIVATE"

// accountDirs are what useradd, groupadd and userdel write: the account
// databases, homes, the mail spool and lastlog/faillog.
var accountDirs = []string{"/etc", "/home", "/var/mail", "/var/log"}

// InPrivateAccounts runs the calling top-level test again in a child
// process whose mount namespace sees accountDirs through overlayfs with
// upper directories in the test's temporary directory, so that the real
// users and groups it adds with the system's tools never reach the
// machine and need no clean-up. It returns true in the child, which runs
// the test's body, and false in the parent once the child passed; a
// failing child fails the test with its output.
func InPrivateAccounts(t *testing.T) bool {
	t.Helper()
	if os.Getenv(privateEnv) == t.Name() {
		return true
	}
	dir := t.TempDir()
	var script strings.Builder
	for i, d := range accountDirs {
		base := filepath.Join(dir, strconv.Itoa(i))
		fmt.Fprintf(&script, "mkdir -p %[1]s/upper %[1]s/work\nmount -t overlay brine-pkgtest -o lowerdir=%[2]s,upperdir=%[1]s/upper,workdir=%[1]s/work %[2]s\n", base, d)
	}
	script.WriteString(`exec "$@"` + "\n")
	cmd := exec.CommandContext(t.Context(), "unshare", "--mount", "--propagation", "private", "sh", "-ec", script.String(),
		"sh", os.Args[0], "-test.run", "^"+regexp.QuoteMeta(t.Name())+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), privateEnv+"="+t.Name())
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("%s in a private mount namespace: %v\n%s", t.Name(), err, out)
	}
	t.Logf("ran in a private mount namespace:\n%s", out)
	return false
}
