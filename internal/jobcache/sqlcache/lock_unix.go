//go:build !windows

package sqlcache

import (
	"os"
	"syscall"
)

// tryLock takes an exclusive lock on f without waiting; the lock goes
// with the process, so a crashed minion's spool is free again.
func tryLock(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}
