package transport

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// logBuffer collects a logger's text output for assertions.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func (l *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// TestBindRetry: a request socket whose port is taken retries the bind,
// saying so, and binds once the port is freed. The port, one the kernel
// handed out, lies in the ephemeral range, which is warned about too.
func TestBindRetry(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	addr := taken.Addr().String()
	var logs logBuffer
	type result struct {
		r   *Router
		err error
	}
	done := make(chan result, 1)
	go func() {
		r, err := ListenRouter(ctx, addr, RouterOptions{BindRetry: time.Minute, Log: logs.logger()}, echo)
		done <- result{r, err}
	}()
	waitFor(t, func() bool { return strings.Contains(logs.String(), "address in use, retrying the bind") })
	if !strings.Contains(logs.String(), "port lies in the kernel's ephemeral port range") {
		t.Errorf("no ephemeral range warning:\n%s", logs.String())
	}
	taken.Close()
	res := <-done
	if res.err != nil {
		t.Fatalf("bind after the port was freed: %v\n%s", res.err, logs.String())
	}
	defer res.r.Close()
	if !strings.Contains(logs.String(), "bound after the address was freed") {
		t.Errorf("no log line for the bind:\n%s", logs.String())
	}
	req := &Req{Addr: addr}
	defer req.Close()
	if got, err := req.Do(ctx, []byte("x")); err != nil || string(got) != "re:x" {
		t.Fatalf("request: %q %v", got, err)
	}
	sc, err := res.r.ln.(*net.TCPListener).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var v int
	sc.Control(func(fd uintptr) { v, err = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_REUSEADDR) })
	if err != nil || v != 1 {
		t.Errorf("SO_REUSEADDR = %d, %v", v, err)
	}
}

// TestBindNoRetry: a negative BindRetry fails at once with the bind's
// error, and so does a publish socket whose ctx ends while it waits.
func TestBindNoRetry(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	_, err = ListenRouter(context.Background(), taken.Addr().String(), RouterOptions{BindRetry: -1}, echo)
	if !errors.Is(err, syscall.EADDRINUSE) {
		t.Fatalf("err = %v, want EADDRINUSE", err)
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	stopped := errors.New("stopped")
	var logs logBuffer
	go func() {
		for !strings.Contains(logs.String(), "retrying the bind") {
			if ctx.Err() != nil {
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
		cancel(stopped)
	}()
	_, err = ListenPub(ctx, taken.Addr().String(), PubOptions{Log: logs.logger()})
	if !errors.Is(err, stopped) {
		t.Fatalf("err = %v, want the ctx's cause", err)
	}
}

func TestEphemeralRange(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good", "32768\t60999\n")
	for _, tc := range []struct {
		addr, file string
		warn       bool
	}{
		{"0.0.0.0:4506", good, false},
		{"0.0.0.0:40000", good, true},
		{"[::]:32768", good, true},
		{"127.0.0.1:60999", good, true},
		{"127.0.0.1:61000", good, false},
		{"127.0.0.1:0", good, false},
		{"127.0.0.1:40000", write("bad", "32768\n"), false},
		{"127.0.0.1:40000", write("words", "low high\n"), false},
		{"127.0.0.1:40000", filepath.Join(dir, "missing"), false},
	} {
		var logs logBuffer
		warnEphemeral(tc.addr, "request", tc.file, logs.logger())
		if got := strings.Contains(logs.String(), "ephemeral port range (net.ipv4"); got != tc.warn {
			t.Errorf("%s with %s: warned %v, want %v:\n%s", tc.addr, filepath.Base(tc.file), got, tc.warn, logs.String())
		}
	}
	if _, _, err := ephemeralRange(filepath.Join(dir, "bad")); err == nil || !strings.Contains(err.Error(), "bad") {
		t.Errorf("bad range file: %v", err)
	}
}
