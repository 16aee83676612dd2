//go:build unix

package sshconn

import (
	"os"
	"syscall"
)

// lockFile takes an exclusive advisory lock, waiting for other processes
// (another salt-ssh run appending to the same known_hosts file).
func lockFile(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			return err
		}
	}
}

func unlockFile(f *os.File) error {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
}
