package pki

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/windows"
)

// TestWindowsPKIACL checks the DACL the pki directory is given (SYSTEM
// and Administrators only, protected from the parent's) and that setting
// it on a new key's directory succeeds. Under Wine the read-back does
// not show it (Wine does not keep file ACLs on this file system), so
// what Windows itself enforces is not tested here (docs/WINDOWS.md).
func TestWindowsPKIACL(t *testing.T) {
	sd, err := windows.SecurityDescriptorFromString(pkiDACL)
	if err != nil {
		t.Fatal(err)
	}
	got := sd.String()
	if !strings.HasPrefix(got, "D:P") || strings.Count(got, "(A;") != 2 ||
		!strings.Contains(got, ";;;SY)") || !strings.Contains(got, ";;;BA)") {
		t.Errorf("pki DACL = %s, want only SYSTEM and Administrators, protected", got)
	}
	dir := filepath.Join(os.Getenv("ProgramData"), "brine-pki-test", "minion")
	t.Cleanup(func() { os.RemoveAll(filepath.Dir(dir)) })
	if _, err := NewMinion(dir).Key(2048); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "minion.pem")); err != nil {
		t.Fatal(err)
	}
}
