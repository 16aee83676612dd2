package transport

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/brinesalt/brine/internal/logattr"
)

// DefaultBindRetry is how long a listener keeps retrying a bind that
// fails because the address is in use.
//
// libzmq (and so Salt's master, salt/transport/zeromq.py) fails at
// once. But the port a master restarts on can be held for a while by a
// socket that is no listener at all: a minion on the same host that
// reconnects while the master is down may be given the ret port as its
// own ephemeral source port (a TCP self-connect), so the bind fails
// until that minion gives up the connection, which it does within a
// reconnect interval.
const DefaultBindRetry = 30 * time.Second

// bindInterval is the wait between bind attempts.
const bindInterval = 500 * time.Millisecond

// portRangeFile holds the kernel's ephemeral port range, "low\thigh".
const portRangeFile = "/proc/sys/net/ipv4/ip_local_port_range"

// listen binds a TCP listener on addr for the socket named what
// ("publish", "request"), with SO_REUSEADDR as libzmq sets it
// (src/tcp_listener.cpp), retrying for up to retry (0:
// DefaultBindRetry, negative: no retry) while the address is in use.
func listen(ctx context.Context, addr, what string, retry time.Duration, log *slog.Logger) (net.Listener, error) {
	if retry == 0 {
		retry = DefaultBindRetry
	}
	warnEphemeral(addr, what, portRangeFile, log)
	lc := net.ListenConfig{Control: reuseAddr}
	deadline := time.Now().Add(retry)
	for attempt := 1; ; attempt++ {
		ln, err := lc.Listen(ctx, "tcp", addr)
		if err == nil {
			if attempt > 1 {
				log.Info("bound after the address was freed", "socket", what, "addr", addr, "attempts", attempt)
			}
			return ln, nil
		}
		if !errors.Is(err, syscall.EADDRINUSE) || retry < 0 || time.Now().After(deadline) {
			return nil, fmt.Errorf("listen %s %s: %w", what, addr, err)
		}
		if attempt == 1 {
			log.Warn("address in use, retrying the bind", "socket", what, "addr", addr, "for", retry.String(), logattr.Err, err)
		}
		t := time.NewTimer(bindInterval)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("listen %s %s: %w", what, addr, context.Cause(ctx))
		case <-t.C:
		}
	}
}

// warnEphemeral warns when addr's port lies in the kernel's ephemeral
// range (read from rangeFile): outgoing connections may take it as
// their source port while the master is not listening, and a restart
// then finds it in use.
func warnEphemeral(addr, what, rangeFile string, log *slog.Logger) {
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		return
	}
	port, err := strconv.Atoi(p)
	if err != nil || port == 0 {
		return
	}
	lo, hi, err := ephemeralRange(rangeFile)
	if err != nil {
		log.Debug("ephemeral port range unknown", logattr.Err, err)
		return
	}
	if port >= lo && port <= hi {
		log.Warn("port lies in the kernel's ephemeral port range (net.ipv4.ip_local_port_range): "+
			"an outgoing connection can take it while the master is down; choose a port outside it",
			"socket", what, "port", port, "range", fmt.Sprintf("%d-%d", lo, hi))
	}
}

// ephemeralRange reads ip_local_port_range: two numbers.
func ephemeralRange(path string) (lo, hi int, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, fmt.Errorf("read ephemeral port range: %w", err)
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 0, 0, fmt.Errorf("read ephemeral port range %s: %q is not two ports", path, b)
	}
	if lo, err = strconv.Atoi(f[0]); err == nil {
		hi, err = strconv.Atoi(f[1])
	}
	if err != nil {
		return 0, 0, fmt.Errorf("read ephemeral port range %s: %w", path, err)
	}
	return lo, hi, nil
}
