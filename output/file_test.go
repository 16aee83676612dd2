package output

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOpenFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out")
	write := func(appendTo bool, s string) {
		t.Helper()
		f, err := OpenFile(path, appendTo)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	read := func() string {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	write(false, "one\n")
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("new --out-file: %v %v, want mode 0600", st, err)
	}
	write(true, "two\n")
	if got := read(); got != "one\ntwo\n" {
		t.Fatalf("--out-file-append: %q", got)
	}
	// Salt empties an existing file but keeps its mode.
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	write(false, "three\n")
	if got := read(); got != "three\n" {
		t.Fatalf("--out-file again: %q", got)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o640 {
		t.Errorf("mode changed to %v", st.Mode().Perm())
	}
	bad := filepath.Join(path, "sub")
	if _, err := OpenFile(bad, false); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("OpenFile(%s) error %v does not name the file", bad, err)
	}
}
