package sshconn

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/testsupport/sshtest"
)

func TestAuthFailure(t *testing.T) {
	priv := keyFile(t)
	tests := []struct {
		name       string
		opts       sshtest.Options
		cfg        func(*Config)
		wantPub    string
		wantReason AuthReason
		wantMsg    string
	}{
		{"server refuses", sshtest.Options{RefuseAuth: true}, func(*Config) {}, "", AuthKeysRejected, "--key-deploy"},
		{"key not authorized", sshtest.Options{}, func(c *Config) {
			c.Signers, c.Priv = nil, []string{priv}
		}, priv + ".pub", AuthKeysRejected, "--key-deploy"},
		{"wrong password", sshtest.Options{Password: "right"}, func(c *Config) {
			c.Signers, c.Password = nil, "wrong"
		}, "", AuthWrongPassword, "wrong password"},
		{"wrong password, keyboard-interactive", sshtest.Options{Password: "right", KeyboardInteractive: true}, func(c *Config) {
			c.Signers, c.Password = nil, "wrong"
		}, "", AuthWrongPassword, "wrong password"},
		{"account locked", sshtest.Options{Password: "right", Banner: "Your account is locked.\n"}, func(c *Config) {
			c.Signers, c.Password = nil, "right-but-locked"
		}, "", AuthAccountLocked, "account is locked"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, tc.opts)
			tc.cfg(&f.cfg)
			_, err := Dial(context.Background(), f.cfg)
			var ae *AuthError
			if !errors.Is(err, ErrAuthFailed) || !errors.As(err, &ae) {
				t.Fatalf("Dial error = %v, want *AuthError", err)
			}
			if ae.PubKeyPath != tc.wantPub || ae.User != "tester" || ae.Reason != tc.wantReason {
				t.Errorf("AuthError = %+v, want PubKeyPath %q, User tester, Reason %d", ae, tc.wantPub, tc.wantReason)
			}
			if !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("message does not say %q: %v", tc.wantMsg, err)
			}
			if tc.wantPub != "" && !strings.Contains(err.Error(), fmt.Sprintf("ssh-copy-id -i %s -p %d tester@127.0.0.1", tc.wantPub, f.srv.Port())) {
				t.Errorf("message lacks the ssh-copy-id command: %v", err)
			}
		})
	}
}

func TestPasswordAuth(t *testing.T) {
	f := newFixture(t, sshtest.Options{Password: "s3cret"})
	f.cfg.Signers, f.cfg.Password = nil, "s3cret"
	c := f.dial(t)
	if code, err := c.Run(context.Background(), "true", nil, nil, nil); code != 0 || err != nil {
		t.Fatalf("Run = %d, %v", code, err)
	}
}

func TestConnectErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedPort := ln.Addr().(*net.TCPAddr).Port
	ln.Close()

	slow := newFixture(t, sshtest.Options{HandshakeDelay: time.Minute})
	tests := []struct {
		name    string
		cfg     Config
		wantCtx bool // also matches context.DeadlineExceeded
	}{
		{"refused", Config{Host: "127.0.0.1", Port: closedPort, Password: "x", HostKey: HostKeyIgnore}, false},
		{"handshake timeout", func() Config { c := slow.cfg; c.Timeout = 50 * time.Millisecond; return c }(), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Dial(context.Background(), tc.cfg)
			if !errors.Is(err, ErrConnect) {
				t.Fatalf("Dial error = %v, want ErrConnect", err)
			}
			if tc.wantCtx && !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Dial error = %v, want it to match context.DeadlineExceeded", err)
			}
		})
	}
	t.Run("ctx cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(20*time.Millisecond, cancel)
		cfg := slow.cfg
		cfg.Timeout = 0
		_, err := Dial(ctx, cfg)
		if !errors.Is(err, ErrConnect) || !errors.Is(err, context.Canceled) {
			t.Fatalf("Dial error = %v, want ErrConnect and context.Canceled", err)
		}
	})
}

func TestRun(t *testing.T) {
	f := newFixture(t, sshtest.Options{AllowPTY: true})
	c := f.dial(t)
	tests := []struct {
		name                 string
		cmd, stdin           string
		opts                 RunOptions
		wantCode             int
		wantStdout, wantErrs string
	}{
		{"ok", "echo out; echo err >&2", "", RunOptions{}, 0, "out\n", "err\n"},
		{"exit code", "echo partial; exit 3", "", RunOptions{}, 3, "partial\n", ""},
		{"stdin", "tr a-z A-Z", "salt\n", RunOptions{}, 0, "SALT\n", ""},
		{"env", `printf %s "$BRINE_X"`, "", RunOptions{Env: map[string]string{"BRINE_X": "y"}}, 0, "y", ""},
		{"pty merges stderr", "echo err >&2; echo $TERM", "", RunOptions{PTY: true, Term: "vt100"}, 0, "err\nvt100\n", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code, err := c.RunWith(context.Background(), tc.cmd, strings.NewReader(tc.stdin), &stdout, &stderr, tc.opts)
			if err != nil || code != tc.wantCode {
				t.Fatalf("Run = %d, %v; want %d, nil", code, err, tc.wantCode)
			}
			if stdout.String() != tc.wantStdout || stderr.String() != tc.wantErrs {
				t.Errorf("stdout, stderr = %q, %q; want %q, %q", stdout.String(), stderr.String(), tc.wantStdout, tc.wantErrs)
			}
		})
	}
	if got := f.srv.Stats(); got.Conns != 1 || got.Sessions != int64(len(tests)) {
		t.Errorf("server stats = %+v, want 1 connection and %d sessions", got, len(tests))
	}
}

func TestRunSignal(t *testing.T) {
	c := newFixture(t, sshtest.Options{}).dial(t)
	code, err := c.Run(context.Background(), "kill -TERM $$", nil, nil, nil)
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Signal != "TERM" || code != -1 {
		t.Fatalf("Run = %d, %v; want -1, *ExitError{Signal: TERM}", code, err)
	}
}

func TestOutput(t *testing.T) {
	c := newFixture(t, sshtest.Options{}).dial(t)
	out, err := c.Output(context.Background(), "echo hi", nil)
	if err != nil || string(out) != "hi\n" {
		t.Fatalf("Output = %q, %v", out, err)
	}
	_, err = c.Output(context.Background(), "echo no such dir >&2; exit 2", nil)
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != 2 || string(ee.Stderr) != "no such dir\n" {
		t.Fatalf("Output error = %#v, want *ExitError{Code: 2, Stderr: ...}", err)
	}
}

func TestRunContextCancel(t *testing.T) {
	f := newFixture(t, sshtest.Options{})
	c := f.dial(t)
	ctx, cancel := context.WithCancel(context.Background())
	var stdout bytes.Buffer
	started := make(chan struct{})
	w := &notifyWriter{w: &stdout, first: started}
	go func() {
		<-started
		cancel()
	}()
	code, err := c.Run(ctx, "echo started; sleep 60", nil, w, nil)
	if !errors.Is(err, context.Canceled) || code != -1 {
		t.Fatalf("Run = %d, %v; want -1, context.Canceled", code, err)
	}
	// The connection survives a cancelled session.
	if code, err := c.Run(context.Background(), "true", nil, nil, nil); code != 0 || err != nil {
		t.Fatalf("Run after cancel = %d, %v", code, err)
	}
}

func TestRunConnectionLost(t *testing.T) {
	f := newFixture(t, sshtest.Options{})
	c := f.dial(t)
	started := make(chan struct{})
	go func() {
		<-started
		f.srv.Close()
	}()
	_, err := c.Run(context.Background(), "echo started; sleep 60", nil, &notifyWriter{w: &bytes.Buffer{}, first: started}, nil)
	if !errors.Is(err, ErrConnLost) {
		t.Fatalf("Run error = %v, want ErrConnLost", err)
	}
	<-c.Done()
	if _, err := c.Run(context.Background(), "true", nil, nil, nil); !errors.Is(err, ErrConnLost) {
		t.Fatalf("Run on a lost connection = %v, want ErrConnLost", err)
	}
}

func TestCloseIdempotent(t *testing.T) {
	c := newFixture(t, sshtest.Options{}).dial(t)
	if _, err := c.SFTP(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := c.SFTP(); err == nil {
		t.Fatal("SFTP after Close succeeded")
	}
}

// notifyWriter closes first on the first write.
type notifyWriter struct {
	w     *bytes.Buffer
	first chan struct{}
	done  bool
}

func (n *notifyWriter) Write(p []byte) (int, error) {
	if !n.done {
		n.done = true
		close(n.first)
	}
	return n.w.Write(p)
}

func TestConcurrentSessionsOnOneConn(t *testing.T) {
	f := newFixture(t, sshtest.Options{})
	c := f.dial(t)
	dir := t.TempDir()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			var out bytes.Buffer
			if code, err := c.Run(context.Background(), "echo "+strconv.Itoa(i), nil, &out, nil); code != 0 || err != nil || out.String() != strconv.Itoa(i)+"\n" {
				t.Errorf("Run %d = %d, %v, %q", i, code, err, out.String())
			}
		})
		wg.Go(func() {
			p := filepath.Join(dir, strconv.Itoa(i))
			if err := c.Upload(context.Background(), strings.NewReader(p), p, 0o600); err != nil {
				t.Errorf("Upload %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	if st := f.srv.Stats(); st.Conns != 1 || st.SFTPOpens != 1 || st.SFTPWrites != 8 {
		t.Errorf("Stats = %+v, want 1 connection, 1 SFTP subsystem, 8 uploads", st)
	}
}

func TestServerAliveKeepsConnection(t *testing.T) {
	f := newFixture(t, sshtest.Options{})
	f.cfg.ServerAliveInterval = 5 * time.Millisecond
	c := f.dial(t)
	time.Sleep(50 * time.Millisecond)
	if code, err := c.Run(context.Background(), "true", nil, nil, nil); code != 0 || err != nil {
		t.Fatalf("Run after keepalives = %d, %v", code, err)
	}
	f.srv.Close()
	select {
	case <-c.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("connection not seen as lost after the server went away")
	}
}
