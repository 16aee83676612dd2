//go:build !windows

package saltutil

import "syscall"

// signalNames are the signal names signal_job accepts (signal.Signals).
var signalNames = map[string]syscall.Signal{"HUP": syscall.SIGHUP, "INT": syscall.SIGINT, "QUIT": syscall.SIGQUIT,
	"KILL": syscall.SIGKILL, "USR1": syscall.SIGUSR1, "USR2": syscall.SIGUSR2, "TERM": syscall.SIGTERM,
	"CONT": syscall.SIGCONT, "STOP": syscall.SIGSTOP}
