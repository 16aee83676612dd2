// Package pamtest makes a real local user for PAM tests without touching
// /etc: commands it starts run in a private mount namespace (unshare
// --mount, propagation private) where temporary copies of /etc/passwd,
// /etc/shadow and /etc/group that add the user and a group are bind-mounted
// over the real ones, and a copy of /etc/pam.d that adds Service is
// mounted over /etc/pam.d. Outside the namespace nothing changes.
//
// Service is pam_unix auth and account with nodelay: Debian's login
// service has pam_faildelay, which makes every wrong password cost about
// three seconds. The copy keeps the real services too, login included.
package pamtest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/eauth"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/internal/testsupport/testhosts"
)

// ServiceName is the PAM service the fixture adds.
const ServiceName = "brine-pamtest"

// FixtureEnv names the environment variable Command sets to the path of
// the fixture's description (Load reads it back), so a process in the
// namespace knows the user without a password in its environment.
const FixtureEnv = "BRINE_PAMTEST_FIXTURE"

// Fixture is a user with a password and a supplementary group that exist
// only in the namespaces its commands run in.
type Fixture struct {
	User     string
	Password string
	Group    string
	UID, GID int // GID is the user's own primary group; Group has GID+1
	Service  string
	Dir      string // the fixture's files (0700)
}

// New prepares the fixture for user (password password, member of
// group). It needs root and util-linux's unshare; without them the test
// is skipped through testhosts.Skip.
func New(t testing.TB, user, password, group string) *Fixture {
	t.Helper()
	testhosts.RequireRoot(t, "bind-mounting test copies of /etc/passwd and /etc/shadow in a mount namespace")
	for _, tool := range []string{"unshare", "mount"} {
		if _, err := exec.LookPath(tool); err != nil {
			testhosts.Skip(t, tool+" (util-linux) is not installed")
		}
	}
	f := &Fixture{User: user, Password: password, Group: group, Service: ServiceName, Dir: t.TempDir()}
	if err := f.write(); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *Fixture) write() error {
	uid, err := freeID("/etc/passwd", f.User, 2)
	if err != nil {
		return err
	}
	gid, err := freeID("/etc/group", f.Group, 2)
	if err != nil {
		return err
	}
	f.UID, f.GID = max(uid, gid), max(uid, gid)
	days := time.Now().Unix() / 86400
	files := []struct {
		src, line string
		perm      os.FileMode
	}{
		{"/etc/passwd", fmt.Sprintf("%s:x:%d:%d:brine pam test:/nonexistent:/usr/sbin/nologin", f.User, f.UID, f.GID), 0o644},
		{"/etc/shadow", fmt.Sprintf("%s:%s:%d:0:99999:7:::", f.User, eauth.SHA512Crypt(f.Password, "brinepamtest"), days), 0o600},
		{"/etc/group", fmt.Sprintf("%s:x:%d:\n%s:x:%d:%s", f.User, f.GID, f.Group, f.GID+1, f.User), 0o644},
	}
	for _, fl := range files {
		old, err := os.ReadFile(fl.src)
		if err != nil {
			return fmt.Errorf("pamtest: %w", err)
		}
		body := strings.TrimRight(string(old), "\n") + "\n" + fl.line + "\n"
		if err := os.WriteFile(filepath.Join(f.Dir, filepath.Base(fl.src)), []byte(body), fl.perm); err != nil {
			return fmt.Errorf("pamtest: %w", err)
		}
	}
	return f.writePAMDir()
}

// writePAMDir copies /etc/pam.d and adds the test service.
func (f *Fixture) writePAMDir() error {
	dir := filepath.Join(f.Dir, "pam.d")
	if err := os.Mkdir(dir, 0o755); err != nil {
		return fmt.Errorf("pamtest: %w", err)
	}
	ents, err := os.ReadDir("/etc/pam.d")
	if err != nil {
		return fmt.Errorf("pamtest: %w", err)
	}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/etc/pam.d", e.Name()))
		if err != nil {
			return fmt.Errorf("pamtest: %w", err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			return fmt.Errorf("pamtest: %w", err)
		}
	}
	svc := "auth required pam_unix.so nodelay\naccount required pam_unix.so\n"
	if err := os.WriteFile(filepath.Join(dir, f.Service), []byte(svc), 0o644); err != nil {
		return fmt.Errorf("pamtest: %w", err)
	}
	desc, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("pamtest: %w", err)
	}
	return os.WriteFile(filepath.Join(f.Dir, "fixture.json"), desc, 0o600)
}

// freeID is an id above every id in the colon file (field 3) below
// 60000, after checking name is not taken there.
func freeID(path, name string, span int) (int, error) {
	fh, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("pamtest: %w", err)
	}
	defer fh.Close()
	top := 20000
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), ":")
		if len(fields) < 3 {
			continue
		}
		if fields[0] == name {
			return 0, fmt.Errorf("pamtest: %s already has %s", path, name)
		}
		if n, err := strconv.Atoi(fields[2]); err == nil && n < 60000 && n >= top {
			top = n + span
		}
	}
	return top, sc.Err()
}

// Command is name with args started in a fresh private mount namespace
// where the fixture's files are mounted over /etc/passwd, /etc/shadow,
// /etc/group and /etc/pam.d. The command's environment (set cmd.Env as
// usual) gets FixtureEnv.
func (f *Fixture) Command(name string, args ...string) *exec.Cmd {
	var script strings.Builder
	script.WriteString("set -e\n")
	for _, m := range [][2]string{{"passwd", "/etc/passwd"}, {"shadow", "/etc/shadow"}, {"group", "/etc/group"}, {"pam.d", "/etc/pam.d"}} {
		fmt.Fprintf(&script, "mount --bind %s %s\n", py.Quote(filepath.Join(f.Dir, m[0])), m[1])
	}
	script.WriteString(`exec "$@"` + "\n")
	argv := append([]string{"--mount", "--propagation", "private", "--", "/bin/sh", "-c", script.String(), "sh", name}, args...)
	cmd := exec.Command("unshare", argv...)
	cmd.Env = append(os.Environ(), FixtureEnv+"="+filepath.Join(f.Dir, "fixture.json"))
	return cmd
}

// Load is the fixture a process started by Command runs in, or nil
// outside one.
func Load() (*Fixture, error) {
	path := os.Getenv(FixtureEnv)
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("pamtest: %w", err)
	}
	f := &Fixture{}
	if err := json.Unmarshal(b, f); err != nil {
		return nil, fmt.Errorf("pamtest: %s: %w", path, err)
	}
	return f, nil
}
