// Package sdnotify tells systemd that a daemon is ready, for units with
// Type=notify as Salt's packaged units are (pkg/common/salt-*.service):
// one READY=1 datagram to the socket $NOTIFY_SOCKET names, as
// salt/utils/process.py notify_systemd sends it. Without the variable (a
// SysV start, a shell) it does nothing.
package sdnotify

import (
	"fmt"
	"net"
	"os"
)

// Env is the variable systemd sets for a Type=notify service.
const Env = "NOTIFY_SOCKET"

// Ready sends READY=1 to $NOTIFY_SOCKET, if set. A name starting with @
// is in the abstract namespace. The variable is left in the environment:
// NotifyAccess=all lets the daemon's helpers notify too, and the job
// runner removes it from what jobs inherit (state/modules/cmd/env.go).
func Ready() error {
	return notify(os.Getenv(Env), "READY=1")
}

func notify(socket, state string) error {
	if socket == "" {
		return nil
	}
	if socket[0] == '@' {
		socket = "\x00" + socket[1:]
	}
	conn, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: socket, Net: "unixgram"})
	if err != nil {
		return fmt.Errorf("notify systemd: %w", err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(state)); err != nil {
		return fmt.Errorf("notify systemd: %w", err)
	}
	return nil
}
