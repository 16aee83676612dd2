package reactor

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// lowerPriority runs the calling goroutine, for the rest of its life,
// on an OS thread of its own whose niceness is raised by n, as Salt's
// reactor process calls os.nice(reactor_niceness). Linux keeps a nice
// value per thread, so only the reactor's worker threads (and the
// processes they start, which inherit it) run at the lower priority.
// The thread is never unlocked: it ends with the goroutine, so no other
// goroutine inherits its priority.
func lowerPriority(n int) error {
	runtime.LockOSThread()
	tid := unix.Gettid()
	// The raw getpriority syscall answers 20 - nice.
	raw, err := unix.Getpriority(unix.PRIO_PROCESS, tid)
	if err != nil {
		return err
	}
	return unix.Setpriority(unix.PRIO_PROCESS, tid, 20-raw+n)
}
