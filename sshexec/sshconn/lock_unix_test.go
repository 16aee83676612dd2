//go:build unix

package sshconn

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// lockFile must take a real flock, which another open file description
// (as in another process) cannot take until it is released.
func TestLockFileExcludesOtherDescriptors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "known_hosts")
	a, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := lockFile(a); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(b.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); !errors.Is(err, syscall.EWOULDBLOCK) {
		t.Fatalf("second flock while held = %v, want EWOULDBLOCK", err)
	}
	if err := unlockFile(a); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(b.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatalf("flock after release = %v", err)
	}
}
