package transport

import "syscall"

// reuseAddr leaves SO_REUSEADDR unset on Windows, where it means another
// socket may bind the same port while this one listens (Go's net
// package leaves it unset there for the same reason); a restarted
// listener binds past TIME_WAIT on Windows without it.
func reuseAddr(_, _ string, _ syscall.RawConn) error { return nil }
