package proc

import (
	"syscall"

	"golang.org/x/sys/windows"
)

// kill is Python's os.kill on Windows: any signal other than the console
// events terminates the process (TerminateProcess), with the signal
// number as its exit code.
func kill(pid int, sig syscall.Signal) error {
	h, err := windows.OpenProcess(windows.PROCESS_TERMINATE, false, uint32(pid))
	if err != nil {
		return err
	}
	defer windows.CloseHandle(h)
	return windows.TerminateProcess(h, uint32(sig))
}
