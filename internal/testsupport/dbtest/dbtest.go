// Package dbtest starts throwaway database servers for tests and
// benchmarks: a PostgreSQL (initdb, then postgres in the foreground)
// and a MariaDB (mariadb-install-db, then mariadbd), each with its data
// in a fresh temporary directory, listening on 127.0.0.1 at a free
// port and on a unix socket in that directory, never the system's
// services. As root the server runs as the unprivileged user its
// package created (postgres, mysql; else nobody). Each has a database
// "salt" and a user "salt" with a random password, passed only through
// the connection (never argv or the environment).
package dbtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/jid"
	"github.com/brinesalt/brine/internal/testsupport/testhosts"
)

// ErrNotInstalled is a server whose programs are not on this machine.
var ErrNotInstalled = errors.New("database server not installed")

// Server is a running throwaway database server.
type Server struct {
	// Kind is "postgres" or "mariadb".
	Kind string
	// Dir holds the data and the unix socket.
	Dir string
	// Host, Port, User, Pass and DB are how to reach the salt database.
	Host string
	Port int
	User string
	Pass string
	DB   string
	// Socket is the unix socket: its directory for PostgreSQL, its path
	// for MariaDB.
	Socket string

	cmd  *exec.Cmd
	args []string
	log  *os.File
	done chan struct{}
}

// Postgres starts a PostgreSQL server.
func Postgres(t testing.TB) *Server { return start(t, StartPostgres) }

// MariaDB starts a MariaDB server.
func MariaDB(t testing.TB) *Server { return start(t, StartMariaDB) }

func start(t testing.TB, f func() (*Server, error)) *Server {
	t.Helper()
	s, err := f()
	if errors.Is(err, ErrNotInstalled) {
		testhosts.Skip(t, err.Error())
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			b, _ := os.ReadFile(s.log.Name())
			t.Logf("--- %s log ---\n%s", s.Kind, b)
		}
		s.Close()
	})
	return s
}

// findProgram looks for a server program on PATH and in the versioned
// directories Debian installs PostgreSQL in.
func findProgram(name string, globs ...string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, g := range globs {
		if m, _ := filepath.Glob(g); len(m) > 0 {
			return m[len(m)-1], nil
		}
	}
	return "", fmt.Errorf("%s: %w (run scripts/install-deps.sh)", name, ErrNotInstalled)
}

// serverUser is the account a server runs as: the current one, or as
// root the first of names that exists.
func serverUser(names ...string) (*user.User, error) {
	if os.Geteuid() != 0 {
		return user.Current()
	}
	for _, n := range append(names, "nobody") {
		if u, err := user.Lookup(n); err == nil {
			return u, nil
		}
	}
	return nil, fmt.Errorf("no unprivileged user to run the server as")
}

// asUser makes cmd run as u (when we are root).
func asUser(cmd *exec.Cmd, u *user.User) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if os.Geteuid() != 0 {
		return
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/nonexistent", "LANG=C.UTF-8"}
}

// tempDir makes a directory the server user owns; /tmp's sticky bit
// lets it be reached, which a test's own 0700 TempDir would not.
func tempDir(prefix string, u *user.User) (string, error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return "", err
	}
	if os.Geteuid() == 0 {
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			os.RemoveAll(dir)
			return "", err
		}
	}
	return dir, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// runQuiet runs a setup program, returning its output on failure.
func runQuiet(cmd *exec.Cmd) error {
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w\n%s", filepath.Base(cmd.Path), err, out)
	}
	return nil
}

// launch starts the server program in the foreground of its own
// process group, its output in Dir/server.log.
func (s *Server) launch(u *user.User) error {
	logf, err := os.OpenFile(filepath.Join(s.Dir, "server.log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	s.log = logf
	cmd := exec.Command(s.args[0], s.args[1:]...)
	asUser(cmd, u)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return err
	}
	s.cmd = cmd
	s.done = make(chan struct{})
	go func() { cmd.Wait(); close(s.done) }()
	return nil
}

// waitReady polls ready until it holds or the server exits.
func (s *Server) waitReady(ready func(context.Context) error) error {
	deadline := time.Now().Add(90 * time.Second)
	var last error
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			b, _ := os.ReadFile(s.log.Name())
			return fmt.Errorf("%s exited at start:\n%s", s.Kind, b)
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		last = ready(ctx)
		cancel()
		if last == nil {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("%s did not come up: %w", s.Kind, last)
}

// Stop stops the server (a fast shutdown, killed after 30 s) and keeps
// its data, for Start to bring it back.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	sig := syscall.SIGTERM
	if s.Kind == "postgres" {
		sig = syscall.SIGINT // a fast shutdown: SIGTERM would wait for the clients
	}
	_ = s.cmd.Process.Signal(sig)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.done
	}
	s.cmd = nil
}

// Kill ends the server at once, as a crash would.
func (s *Server) Kill() {
	if s.cmd == nil {
		return
	}
	pgid := s.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	<-s.done
	// The server's children die with it, but not at the same instant:
	// wait until none is left, so a restart finds its data free.
	for i := 0; i < 500 && syscall.Kill(-pgid, 0) == nil; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	s.cmd = nil
}

// Start starts a stopped server again on the same port and data.
func (s *Server) Start() error {
	u, err := s.user()
	if err != nil {
		return err
	}
	// After a kill the old server's shared memory can stay attached for a
	// moment; a postgres started then exits at once, so try again.
	var last error
	for range 20 {
		if s.log != nil {
			s.log.Close()
		}
		if err := s.launch(u); err != nil {
			return err
		}
		if last = s.waitReady(s.ready); last == nil {
			return nil
		}
		s.Kill()
		time.Sleep(250 * time.Millisecond)
	}
	return last
}

func (s *Server) user() (*user.User, error) {
	if s.Kind == "postgres" {
		return serverUser("postgres")
	}
	return serverUser("mysql")
}

func (s *Server) ready(ctx context.Context) error {
	if s.Kind == "postgres" {
		return s.pgReady(ctx)
	}
	return s.mariaReady(ctx)
}

// Close stops the server and removes its directory.
func (s *Server) Close() {
	s.Stop()
	if s.log != nil {
		s.log.Close()
	}
	os.RemoveAll(s.Dir)
}

// password is a fresh random password.
func password() string { return "pw-" + jid.RandomHex(12) }

// pathList renders the unix socket path for messages.
func (s *Server) String() string {
	return fmt.Sprintf("%s on 127.0.0.1:%d (%s)", s.Kind, s.Port, strings.TrimSpace(s.Socket))
}
