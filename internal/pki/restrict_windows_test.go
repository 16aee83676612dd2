package pki

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/windows"
)

// TestWindowsPKIACL checks the DACL the pki directory is given (SYSTEM
// and Administrators only, protected from the parent's), that setting it
// on a new key's directory succeeds, and, where the file system keeps
// security descriptors, reads it back with GetNamedSecurityInfo. Debian
// 12's Wine 8.0 keeps none: its wineserver is built without extended
// attribute support (wineserver64 imports no *xattr function and has no
// "user.wine.sd" string), so it answers every GetNamedSecurityInfo with
// a DACL made up from the Unix mode (SYSTEM, the user, Everyone) and the
// read-back is not possible there (docs/WINDOWS.md). keepsDACLs tells
// the two apart on a scratch directory first.
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
	if !keepsDACLs(t, filepath.Join(filepath.Dir(dir), "probe")) {
		t.Log("this file system keeps no security descriptors (Wine without xattr support): the pki DACL read-back is not possible here")
		return
	}
	back, err := windows.GetNamedSecurityInfo(dir, windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		t.Fatalf("GetNamedSecurityInfo %s: %v", dir, err)
	}
	if got := back.String(); got != "D:P(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)" {
		t.Errorf("pki dir DACL read back = %s, want D:P(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)", got)
	}
}

// keepsDACLs sets a protected DACL different from pkiDACL on a new
// directory dir and reports whether GetNamedSecurityInfo gives it back.
// (Not t.TempDir: Go's os.RemoveAll fails under Wine 8.0, which does not
// answer FileDispositionInformationEx as Go expects, "Invalid function".)
func keepsDACLs(t *testing.T, dir string) bool {
	const probe = "D:P(A;OICI;FA;;;SY)(A;OICI;FR;;;WD)"
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	sd, err := windows.SecurityDescriptorFromString(probe)
	if err != nil {
		t.Fatal(err)
	}
	dacl, _, err := sd.DACL()
	if err != nil {
		t.Fatal(err)
	}
	if err := windows.SetNamedSecurityInfo(dir, windows.SE_FILE_OBJECT,
		windows.DACL_SECURITY_INFORMATION|windows.PROTECTED_DACL_SECURITY_INFORMATION, nil, nil, dacl, nil); err != nil {
		t.Fatalf("SetNamedSecurityInfo %s: %v", dir, err)
	}
	back, err := windows.GetNamedSecurityInfo(dir, windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		t.Fatalf("GetNamedSecurityInfo %s: %v", dir, err)
	}
	return back.String() == probe
}
