package sshtest_test

import (
	"bytes"
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/pkg/sftp"
	"go.uber.org/goleak"
	"golang.org/x/crypto/ssh"

	"github.com/brinesalt/brine/internal/testsupport/sshtest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func dial(t *testing.T, srv *sshtest.Server, key ssh.Signer) *ssh.Client {
	t.Helper()
	c, err := ssh.Dial("tcp", srv.Addr(), &ssh.ClientConfig{
		User:            "u",
		Auth:            []ssh.AuthMethod{ssh.PublicKeys(key)},
		HostKeyCallback: ssh.FixedHostKey(srv.HostKey()),
	})
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestExec(t *testing.T) {
	key := sshtest.GenerateKey(t)
	srv := sshtest.New(t, sshtest.Options{AuthorizedKeys: []ssh.PublicKey{key.PublicKey()}, Env: []string{"SSHTEST_X=1"}})
	c := dial(t, srv, key)
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	sess.Stdin, sess.Stdout, sess.Stderr = bytes.NewBufferString("in"), &stdout, &stderr
	err = sess.Run(`cat; echo "$SSHTEST_X"; echo e >&2; exit 4`)
	var ee *ssh.ExitError
	if !errors.As(err, &ee) || ee.ExitStatus() != 4 {
		t.Fatalf("Run = %v, want exit status 4", err)
	}
	if stdout.String() != "in1\n" || stderr.String() != "e\n" {
		t.Errorf("stdout, stderr = %q, %q", stdout.String(), stderr.String())
	}
	if pty, err := c.NewSession(); err != nil {
		t.Fatal(err)
	} else if err := pty.RequestPty("xterm", 24, 80, nil); err == nil {
		t.Error("pty accepted without AllowPTY")
	}
	want := sshtest.Stats{Conns: 1, AuthOK: 1, Sessions: 2, Execs: 1}
	if diff := cmp.Diff(want, srv.Stats()); diff != "" {
		t.Errorf("Stats (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{`cat; echo "$SSHTEST_X"; echo e >&2; exit 4`}, srv.Commands()); diff != "" {
		t.Errorf("Commands (-want +got):\n%s", diff)
	}
}

func TestKeyFile(t *testing.T) {
	path, signer := sshtest.KeyFile(t)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := ssh.ParsePrivateKey(data)
	if err != nil || !bytes.Equal(parsed.PublicKey().Marshal(), signer.PublicKey().Marshal()) {
		t.Fatalf("key file does not hold the signer's key: %v", err)
	}
	srv := sshtest.New(t, sshtest.Options{AuthorizedKeys: []ssh.PublicKey{signer.PublicKey()}})
	dial(t, srv, parsed)
}

func TestSFTPCountsWrites(t *testing.T) {
	key := sshtest.GenerateKey(t)
	dir := t.TempDir()
	srv := sshtest.New(t, sshtest.Options{AuthorizedKeys: []ssh.PublicKey{key.PublicKey()}, Dir: dir})
	s, err := sftp.NewClient(dial(t, srv, key))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	f, err := s.Create("rel.txt") // relative to Options.Dir
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("data"))
	f.Close()
	if r, err := s.Open(filepath.Join(dir, "rel.txt")); err != nil {
		t.Fatal(err)
	} else {
		r.Close()
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "rel.txt")); string(got) != "data" {
		t.Errorf("file = %q", got)
	}
	if st := srv.Stats(); st.SFTPOpens != 1 || st.SFTPWrites != 1 || st.SFTPBytesIn == 0 {
		t.Errorf("Stats = %+v, want one subsystem, one write-open, some bytes", st)
	}
}

func TestFaults(t *testing.T) {
	key := sshtest.GenerateKey(t)
	cfg := func(srv *sshtest.Server) *ssh.ClientConfig {
		return &ssh.ClientConfig{User: "u", Auth: []ssh.AuthMethod{ssh.PublicKeys(key)},
			HostKeyCallback: ssh.FixedHostKey(srv.HostKey())}
	}
	refusing := sshtest.New(t, sshtest.Options{AuthorizedKeys: []ssh.PublicKey{key.PublicKey()}, RefuseAuth: true})
	if _, err := ssh.Dial("tcp", refusing.Addr(), cfg(refusing)); err == nil {
		t.Error("RefuseAuth server accepted the key")
	}
	slow := sshtest.New(t, sshtest.Options{AuthorizedKeys: []ssh.PublicKey{key.PublicKey()}, HandshakeDelay: time.Minute})
	tcp, err := net.Dial("tcp", slow.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Close()
	tcp.SetDeadline(time.Now().Add(100 * time.Millisecond))
	if _, _, _, err := ssh.NewClientConn(tcp, slow.Addr(), cfg(slow)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("handshake = %v, want a deadline error during HandshakeDelay", err)
	}
	slow.Close() // must not wait for the delay
}

func TestCloseKillsCommands(t *testing.T) {
	key := sshtest.GenerateKey(t)
	srv := sshtest.New(t, sshtest.Options{AuthorizedKeys: []ssh.PublicKey{key.PublicKey()}})
	c := dial(t, srv, key)
	sess, err := c.NewSession()
	if err != nil {
		t.Fatal(err)
	}
	if err := sess.Start("sleep 60"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- sess.Wait() }()
	srv.Close()
	if err := <-done; err == nil {
		t.Error("session ended cleanly although the server closed")
	}
}
