// Package sshtest is an in-process SSH server for fast tests of the
// salt-ssh transport and executor. It listens on 127.0.0.1, authenticates
// public keys (and optionally a password), runs "exec" requests with
// /bin/sh -c on the local machine, serves the "sftp" subsystem from the real
// filesystem, counts what clients did, and injects faults.
//
// It is not a security boundary: commands run as the test's user.
package sshtest

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/subtle"
	"encoding/pem"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// Options configure a Server. The zero value accepts no one; give
// AuthorizedKeys or Password.
type Options struct {
	// HostKey is the server's key; nil generates an ed25519 key.
	HostKey ssh.Signer
	// ExtraHostKeys are offered too (one per algorithm), to test host key
	// algorithm negotiation.
	ExtraHostKeys []ssh.Signer
	// AuthorizedKeys are accepted for any user.
	AuthorizedKeys []ssh.PublicKey
	// Password, when set, is accepted for any user.
	Password string
	// AllowPTY accepts "pty-req". No terminal is allocated: the command's
	// stderr is merged into stdout, as it would be on a terminal, and TERM
	// is set.
	AllowPTY bool
	// Dir is the working directory of commands and the SFTP server; empty
	// means the test process's. Paths are not confined to it.
	Dir string
	// Env is appended to the environment of every command.
	Env []string

	// KeyboardInteractive accepts Password through a keyboard-interactive
	// "Password:" prompt instead of the password method, as sshd with PAM
	// does.
	KeyboardInteractive bool
	// UserCA, when set, accepts OpenSSH user certificates it signed whose
	// principals name the login user, as sshd's TrustedUserCAKeys.
	UserCA ssh.PublicKey
	// Banner is sent before authentication (sshd's Banner, or a PAM
	// message such as an account being locked).
	Banner string
	// AllowForward accepts "direct-tcpip" channels (ssh -W, ProxyJump):
	// the server dials the requested address and relays bytes.
	AllowForward bool

	// RefuseAuth rejects every authentication attempt.
	RefuseAuth bool
	// DropAfterSFTPBytes, when positive, closes the whole connection once
	// the SFTP server has received more than this many bytes on it.
	DropAfterSFTPBytes int64
	// HandshakeDelay stalls each connection before the SSH handshake.
	HandshakeDelay time.Duration
}

// Stats counts client activity since the server started.
type Stats struct {
	Conns     int64 // TCP connections accepted
	AuthOK    int64 // connections that authenticated
	Sessions  int64 // session channels opened
	Execs     int64 // exec requests run
	PTYs      int64 // pty requests accepted
	SFTPOpens int64 // sftp subsystems started

	SFTPWrites  int64 // files opened for writing over SFTP (uploads)
	SFTPBytesIn int64 // bytes the SFTP server received

	Forwards int64 // direct-tcpip channels accepted
}

// Server is a running test SSH server.
type Server struct {
	t     testing.TB
	opts  Options
	ln    net.Listener
	cfg   *ssh.ServerConfig
	hostK ssh.PublicKey

	conns, authOK, sessions, execs, ptys, sftpOpens atomic.Int64
	sftpWrites, sftpBytesIn, forwards               atomic.Int64

	mu       sync.Mutex
	methods  []string
	closed   bool
	active   map[net.Conn]struct{}
	commands []string
	stop     chan struct{}
	wg       sync.WaitGroup
}

// New starts a server on 127.0.0.1:0 and registers Close with t.Cleanup.
func New(t testing.TB, opts Options) *Server {
	t.Helper()
	if opts.HostKey == nil {
		opts.HostKey = GenerateKey(t)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("sshtest: listen: %v", err)
	}
	s := &Server{
		t: t, opts: opts, ln: ln, hostK: opts.HostKey.PublicKey(),
		active: map[net.Conn]struct{}{}, stop: make(chan struct{}),
	}
	s.cfg = s.serverConfig()
	s.wg.Add(1)
	go s.acceptLoop()
	t.Cleanup(s.Close)
	return s
}

// GenerateKey returns a fresh ed25519 signer, for host or client keys.
func GenerateKey(t testing.TB) ssh.Signer {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatalf("sshtest: generate key: %v", err)
	}
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatalf("sshtest: signer: %v", err)
	}
	return s
}

// KeyFile writes a fresh unencrypted ed25519 key in OpenSSH format (mode
// 0600) with its ".pub" into a temp dir, for code that takes key paths; it
// is much faster than generating Salt's RSA key.
func KeyFile(t testing.TB) (path string, signer ssh.Signer) {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatalf("sshtest: generate key: %v", err)
	}
	block, err := ssh.MarshalPrivateKey(priv, "sshtest")
	if err != nil {
		t.Fatalf("sshtest: encode key: %v", err)
	}
	if signer, err = ssh.NewSignerFromKey(priv); err != nil {
		t.Fatalf("sshtest: signer: %v", err)
	}
	path = filepath.Join(t.TempDir(), "id_ed25519")
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatalf("sshtest: %v", err)
	}
	if err := os.WriteFile(path+".pub", ssh.MarshalAuthorizedKey(signer.PublicKey()), 0o644); err != nil {
		t.Fatalf("sshtest: %v", err)
	}
	return path, signer
}

func (s *Server) serverConfig() *ssh.ServerConfig {
	checker := &ssh.CertChecker{
		IsUserAuthority: func(auth ssh.PublicKey) bool {
			return s.opts.UserCA != nil && subtle.ConstantTimeCompare(auth.Marshal(), s.opts.UserCA.Marshal()) == 1
		},
	}
	cfg := &ssh.ServerConfig{
		PublicKeyCallback: func(conn ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
			s.noteMethod("publickey")
			if s.opts.RefuseAuth {
				return nil, errors.New("auth refused")
			}
			if _, ok := key.(*ssh.Certificate); ok {
				if s.opts.UserCA == nil {
					return nil, errors.New("no user CA")
				}
				return checker.Authenticate(conn, key)
			}
			for _, k := range s.opts.AuthorizedKeys {
				if subtle.ConstantTimeCompare(k.Marshal(), key.Marshal()) == 1 {
					return nil, nil
				}
			}
			return nil, errors.New("unknown key")
		},
	}
	if s.opts.Banner != "" {
		cfg.BannerCallback = func(ssh.ConnMetadata) string { return s.opts.Banner }
	}
	checkPW := func(pw []byte) bool {
		return !s.opts.RefuseAuth && subtle.ConstantTimeCompare(pw, []byte(s.opts.Password)) == 1
	}
	switch {
	case s.opts.Password != "" && s.opts.KeyboardInteractive:
		cfg.KeyboardInteractiveCallback = func(_ ssh.ConnMetadata, client ssh.KeyboardInteractiveChallenge) (*ssh.Permissions, error) {
			s.noteMethod("keyboard-interactive")
			ans, err := client("", "", []string{"Password: "}, []bool{false})
			if err != nil {
				return nil, err
			}
			if len(ans) == 1 && checkPW([]byte(ans[0])) {
				return nil, nil
			}
			return nil, errors.New("wrong password")
		}
	case s.opts.Password != "":
		cfg.PasswordCallback = func(_ ssh.ConnMetadata, pw []byte) (*ssh.Permissions, error) {
			s.noteMethod("password")
			if checkPW(pw) {
				return nil, nil
			}
			return nil, errors.New("wrong password")
		}
	}
	cfg.AddHostKey(s.opts.HostKey)
	for _, k := range s.opts.ExtraHostKeys {
		cfg.AddHostKey(k)
	}
	return cfg
}

func (s *Server) noteMethod(m string) {
	s.mu.Lock()
	s.methods = append(s.methods, m)
	s.mu.Unlock()
}

// Addr is the listening address, "127.0.0.1:<port>".
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Host is the listening IP, "127.0.0.1".
func (s *Server) Host() string { return "127.0.0.1" }

// Port is the listening port.
func (s *Server) Port() int { return s.ln.Addr().(*net.TCPAddr).Port }

// HostKey is the server's public host key.
func (s *Server) HostKey() ssh.PublicKey { return s.hostK }

// Stats returns the counters.
func (s *Server) Stats() Stats {
	return Stats{
		Conns: s.conns.Load(), AuthOK: s.authOK.Load(), Sessions: s.sessions.Load(),
		Execs: s.execs.Load(), PTYs: s.ptys.Load(), SFTPOpens: s.sftpOpens.Load(),
		SFTPWrites: s.sftpWrites.Load(), SFTPBytesIn: s.sftpBytesIn.Load(),
		Forwards: s.forwards.Load(),
	}
}

// AuthAttempts lists the authentication methods clients tried that reached
// a check (publickey, password, keyboard-interactive), in order.
func (s *Server) AuthAttempts() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.methods...)
}

// Commands returns the exec'd command lines in arrival order.
func (s *Server) Commands() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.commands...)
}

// KnownHostsLine is the server's key in known_hosts form.
func (s *Server) KnownHostsLine() string {
	return "[127.0.0.1]:" + strconv.Itoa(s.Port()) + " " + string(ssh.MarshalAuthorizedKey(s.hostK))
}

// Close stops accepting, closes every connection (killing running
// commands) and waits for all server goroutines. It is idempotent.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	close(s.stop)
	for c := range s.active {
		c.Close()
	}
	s.mu.Unlock()
	s.ln.Close()
	s.wg.Wait()
}

func (s *Server) acceptLoop() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		if !s.track(c) {
			c.Close()
			return
		}
		s.conns.Add(1)
		s.wg.Add(1)
		go s.serveConn(c)
	}
}

func (s *Server) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.active[c] = struct{}{}
	return true
}

func (s *Server) untrack(c net.Conn) {
	s.mu.Lock()
	delete(s.active, c)
	s.mu.Unlock()
	c.Close()
}

func (s *Server) serveConn(c net.Conn) {
	defer s.wg.Done()
	defer s.untrack(c)
	if d := s.opts.HandshakeDelay; d > 0 {
		timer := time.NewTimer(d)
		select {
		case <-timer.C:
		case <-s.stop:
			timer.Stop()
			return
		}
	}
	sc, chans, reqs, err := ssh.NewServerConn(c, s.cfg)
	if err != nil {
		return
	}
	defer sc.Close()
	s.authOK.Add(1)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		ssh.DiscardRequests(reqs)
	}()
	budget := &dropBudget{limit: s.opts.DropAfterSFTPBytes, drop: func() { c.Close() }}
	for nc := range chans {
		if nc.ChannelType() == "direct-tcpip" && s.opts.AllowForward {
			s.forwards.Add(1)
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.serveForward(nc)
			}()
			continue
		}
		if nc.ChannelType() != "session" {
			nc.Reject(ssh.UnknownChannelType, "only session channels")
			continue
		}
		s.sessions.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.serveSession(nc, budget)
		}()
	}
	wg.Wait()
}

// dropBudget closes the connection once SFTP has read more than limit
// bytes on it; limit <= 0 never drops.
type dropBudget struct {
	limit int64
	drop  func()

	mu      sync.Mutex
	used    int64
	tripped bool
}

// consume charges n bytes and reports whether the connection must drop now.
func (b *dropBudget) consume(n int) bool {
	if b.limit <= 0 {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used += int64(n)
	if b.used > b.limit && !b.tripped {
		b.tripped = true
		return true
	}
	return b.tripped
}

// serveForward relays a direct-tcpip channel to the address it names.
func (s *Server) serveForward(nc ssh.NewChannel) {
	var req struct {
		Host     string
		Port     uint32
		OrigHost string
		OrigPort uint32
	}
	if err := ssh.Unmarshal(nc.ExtraData(), &req); err != nil {
		nc.Reject(ssh.ConnectionFailed, "bad direct-tcpip request")
		return
	}
	target, err := net.DialTimeout("tcp", net.JoinHostPort(req.Host, strconv.Itoa(int(req.Port))), 5*time.Second)
	if err != nil {
		nc.Reject(ssh.ConnectionFailed, err.Error())
		return
	}
	ch, reqs, err := nc.Accept()
	if err != nil {
		target.Close()
		return
	}
	go ssh.DiscardRequests(reqs)
	done := make(chan struct{}, 2)
	go func() {
		io.Copy(target, ch)
		target.(*net.TCPConn).CloseWrite()
		done <- struct{}{}
	}()
	go func() {
		io.Copy(ch, target)
		ch.CloseWrite()
		done <- struct{}{}
	}()
	select {
	case <-done:
		<-done
	case <-s.stop:
	}
	ch.Close()
	target.Close()
}

// SignUserCert signs pub as an OpenSSH user certificate for principals with
// ca, valid from an hour ago for a day.
func SignUserCert(t testing.TB, ca ssh.Signer, pub ssh.PublicKey, principals ...string) *ssh.Certificate {
	t.Helper()
	return signCert(t, ca, pub, ssh.UserCert, principals)
}

// SignHostCert signs a host key as an OpenSSH host certificate for the
// given host names; NewCertSigner(cert, hostKey) is then a HostKey.
func SignHostCert(t testing.TB, ca ssh.Signer, pub ssh.PublicKey, hosts ...string) *ssh.Certificate {
	t.Helper()
	return signCert(t, ca, pub, ssh.HostCert, hosts)
}

func signCert(t testing.TB, ca ssh.Signer, pub ssh.PublicKey, typ uint32, principals []string) *ssh.Certificate {
	cert := &ssh.Certificate{
		Key: pub, CertType: typ, KeyId: "sshtest", ValidPrincipals: principals,
		ValidAfter:  uint64(time.Now().Add(-time.Hour).Unix()),
		ValidBefore: uint64(time.Now().Add(24 * time.Hour).Unix()),
	}
	if typ == ssh.UserCert {
		cert.Permissions.Extensions = map[string]string{"permit-pty": ""}
	}
	if err := cert.SignCert(rand.Reader, ca); err != nil {
		t.Fatalf("sshtest: sign certificate: %v", err)
	}
	return cert
}
