package testhosts

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGuardDirs(t *testing.T) {
	d := filepath.Join(t.TempDir(), "tmp")
	if err := os.Mkdir(d, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(d, os.ModeSticky|0o777); err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	if code := guardDirs([]string{d}, &errb, func() int { return 0 }); code != 0 || errb.Len() != 0 {
		t.Errorf("untouched: code %d, %q", code, errb.String())
	}
	code := guardDirs([]string{d}, &errb, func() int {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return 0
	})
	if code != 1 || !strings.Contains(errb.String(), d+" from dtrwxrwxrwx 0:0 to drwxr-xr-x 0:0") {
		t.Errorf("chmod 0755: code %d, %q", code, errb.String())
	}
}
