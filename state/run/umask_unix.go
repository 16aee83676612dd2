//go:build !windows

package run

import "syscall"

// setUmask sets the process umask and returns the function restoring it.
func setUmask(m int) func() {
	old := syscall.Umask(m)
	return func() { syscall.Umask(old) }
}
