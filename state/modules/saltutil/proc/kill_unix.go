//go:build !windows

package proc

import "syscall"

func kill(pid int, sig syscall.Signal) error { return syscall.Kill(pid, sig) }
