package pkgtest

import (
	"os"
	"os/exec"
	"path/filepath"
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

// CleanupUser removes a test user (and its home and mail spool) when the
// test ends.
func CleanupUser(t testing.TB, name string) {
	t.Cleanup(func() { exec.Command("userdel", "-r", "-f", name).Run() })
}

// CleanupGroup removes a test group when the test ends.
func CleanupGroup(t testing.TB, name string) {
	t.Cleanup(func() { exec.Command("groupdel", name).Run() })
}
