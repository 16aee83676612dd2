package sdnotify

import (
	"net"
	"path/filepath"
	"testing"
	"time"
)

// TestReady listens on a unixgram socket as systemd does, on a path and
// in the abstract namespace, and checks the datagram Ready sends.
func TestReady(t *testing.T) {
	for _, name := range []string{filepath.Join(t.TempDir(), "notify"), "@brine-sdnotify-test-" + t.Name()} {
		t.Run(name, func(t *testing.T) {
			addr := name
			if addr[0] == '@' {
				addr = "\x00" + addr[1:]
			}
			l, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: addr, Net: "unixgram"})
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			t.Setenv(Env, name)
			if err := Ready(); err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 64)
			_ = l.SetReadDeadline(time.Now().Add(5 * time.Second))
			n, err := l.Read(buf)
			if err != nil {
				t.Fatal(err)
			}
			if got := string(buf[:n]); got != "READY=1" {
				t.Errorf("got %q, want READY=1", got)
			}
		})
	}
}

// TestReadyWithoutSystemd checks that a daemon started without systemd
// (no NOTIFY_SOCKET) is not held up, and that a socket that is gone is an
// error the caller can log.
func TestReadyWithoutSystemd(t *testing.T) {
	t.Setenv(Env, "")
	if err := Ready(); err != nil {
		t.Errorf("without %s: %v", Env, err)
	}
	t.Setenv(Env, filepath.Join(t.TempDir(), "gone"))
	if err := Ready(); err == nil {
		t.Error("a missing socket: no error")
	}
}
