//go:build !windows

package transport

import "syscall"

// reuseAddr sets SO_REUSEADDR, so a restarted master binds while its
// old connections linger in TIME_WAIT (Go's net package sets it on Unix
// listeners too; this keeps it explicit).
func reuseAddr(_, _ string, rc syscall.RawConn) error {
	var serr error
	err := rc.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1)
	})
	if err != nil {
		return err
	}
	return serr
}
