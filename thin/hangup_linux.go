//go:build linux

package thin

import (
	"context"
	"os"

	"golang.org/x/sys/unix"
)

// WatchHangup calls cancel when nobody reads stdout any more: when the
// SSH session that started the thin binary is closed (salt-ssh was
// interrupted, or the connection died), sshd closes the pipe and the job
// stops instead of running on unattended. OpenSSH delivers no signal to a
// command without a pty, so the pipe is the only notice. It returns at
// once when stdout is not a pipe.
func WatchHangup(cancel context.CancelFunc) {
	st, err := os.Stdout.Stat()
	if err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		return
	}
	go func() {
		fds := []unix.PollFd{{Fd: int32(os.Stdout.Fd()), Events: 0}}
		for {
			n, err := unix.Poll(fds, -1)
			if err == unix.EINTR {
				continue
			}
			if err != nil || (n > 0 && fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0) {
				cancel()
				return
			}
		}
	}()
}
