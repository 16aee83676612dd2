//go:build !windows

package returners

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive lock on f, waiting for it (fcntl.flock
// LOCK_EX, as rawfile_json does).
func lockFile(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_EX) }
