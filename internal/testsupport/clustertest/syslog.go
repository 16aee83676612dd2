package clustertest

import (
	"net"
	"os"
	"path/filepath"
	"testing"
)

// SyslogListener is a real unix datagram socket, as /dev/log is, for
// tests of the syslog returner: it returns the socket's path and the
// messages that arrive. It closes with the test.
func SyslogListener(t *testing.T) (string, <-chan string) {
	t.Helper()
	// A short path: unix socket names are limited to 108 bytes.
	dir, err := os.MkdirTemp("", "sl")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "log")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	ch := make(chan string, 16)
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 1<<16)
		for {
			n, err := conn.Read(buf)
			if err != nil {
				return
			}
			ch <- string(buf[:n])
		}
	}()
	t.Cleanup(func() { conn.Close(); <-done })
	return path, ch
}
