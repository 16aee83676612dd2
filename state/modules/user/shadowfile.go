package user

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
)

// lockTimeout is how long lckpwdf waits for the password files' lock
// (glibc shadow/lckpwdf.c TIMEOUT) before giving up.
const lockTimeout = 15 * time.Second

// setPassword is linux_shadow.set_password: the user must exist (`id
// NAME`, on the host even with root, as Salt runs it), then with
// use_usermod `usermod [-R ROOT] -p HASH NAME`, which puts the hash in
// usermod's argv as Salt's documentation warns ("less secure"); by
// default the shadow file itself gets the hash and today's date as its
// last change. The result is whether the file now holds the hash.
func (m *Module) setPassword(ctx context.Context, c *modules.Call) (any, error) {
	name, pw := c.Str("name"), c.Str("password")
	r, err := m.run(ctx, []string{"id", name})
	if err != nil {
		return nil, err
	}
	if r.Retcode != 0 {
		warn(c, "user "+name+" does not exist, cannot set password")
		return false, nil
	}
	root := m.root(c)
	if isTrue(c.Arg("use_usermod")) {
		cmd := []string{"usermod"}
		if r := c.Str("root"); r != "" {
			cmd = append(cmd, "-R", r)
		}
		if _, err := m.run(ctx, append(cmd, "-p", pw, name)); err != nil {
			return nil, err
		}
		return shadowInfo(root, name).Value("passwd") == pw, nil
	}
	path := shadowPath(c, root, name)
	if st, err := os.Stat(path); err != nil || !st.Mode().IsRegular() {
		return ordered.New(), nil // Salt returns {} when there is no such file
	}
	unlock, err := lockPasswordFiles(ctx, root)
	if err != nil {
		return nil, modules.Errorf("set password of %s: %w", name, err)
	}
	defer unlock()
	found, err := rewriteShadow(path, name, pw, lastChange(m.now()))
	if err != nil {
		return nil, modules.Errorf("set password of %s: %w", name, err)
	}
	if !found {
		warn(c, "shadow entry not present for user "+name+", adding")
	}
	return parseShadow(path, name).Value("passwd") == pw, nil
}

// shadowPath is the file linux_shadow.set_password edits: /etc/shadow, or
// ALT Linux's tcb file of the user (tcb(5)), under root.
func shadowPath(c *modules.Call, root, name string) string {
	p := "etc/shadow"
	if c.Env != nil && str(c.Env.Grains().Value("os")) == "ALT" {
		p = filepath.Join("etc/tcb", name, "shadow")
	}
	return filepath.Join(root, p)
}

func (m *Module) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

// lastChange is the shadow lstchg Salt writes: the days from 1970-01-01
// to today's local date ((datetime.today() - datetime(1970, 1, 1)).days).
func lastChange(now time.Time) string {
	y, mo, d := now.Date()
	return strconv.FormatInt(time.Date(y, mo, d, 0, 0, 0, 0, time.UTC).Unix()/86400, 10)
}

// setShadowEntry is the edit linux_shadow.set_password makes to a shadow
// file's content: every line of the user, trimmed and cut to nine
// fields (missing ones added), gets the hash and lstchg; the other lines
// stay byte for byte. Without such a line one is appended, after a
// newline if the file lacked its last one (Salt's append would run the
// entry into the last line).
func setShadowEntry(data []byte, name, hash, lstchg string) ([]byte, bool) {
	var out bytes.Buffer
	found := false
	for rest := data; len(rest) > 0; {
		line := rest
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line = rest[:i+1]
		}
		rest = rest[len(line):]
		comps := strings.Split(strings.TrimSpace(string(line)), ":")
		if comps[0] != name {
			out.Write(line)
			continue
		}
		found = true
		comps = comps[:min(len(comps), 9)]
		for len(comps) < 9 {
			comps = append(comps, "")
		}
		comps[1], comps[2] = hash, lstchg
		out.WriteString(strings.Join(comps, ":") + "\n")
	}
	if !found {
		if len(data) > 0 && data[len(data)-1] != '\n' {
			out.WriteByte('\n')
		}
		fmt.Fprintf(&out, "%s:%s:%s::::::\n", name, hash, lstchg)
	}
	return out.Bytes(), found
}

// rewriteShadow sets the user's entry in the shadow file path and
// reports whether it was there. The new content goes to a temporary file
// beside path, with path's mode and owner, which then replaces path: a
// reader sees the old file or the new one, never half of it.
func rewriteShadow(path, name, hash, lstchg string) (bool, error) {
	st, err := os.Stat(path)
	if err != nil {
		return false, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return false, err
	}
	out, found := setShadowEntry(data, name, hash, lstchg)
	if err := replaceFile(path, out, st); err != nil {
		return false, err
	}
	return found, nil
}

// replaceFile atomically replaces path with data, keeping st's mode and
// owner.
func replaceFile(path string, data []byte, st os.FileInfo) (err error) {
	// Created 0600 by CreateTemp: nobody else reads the hashes before the
	// owner and mode are right.
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".brine-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		if err = tmp.Chown(int(sys.Uid), int(sys.Gid)); err != nil {
			return err
		}
	}
	if err = tmp.Chmod(st.Mode().Perm()); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	if d, derr := os.Open(filepath.Dir(path)); derr == nil {
		d.Sync() // the rename itself survives a crash
		d.Close()
	}
	return nil
}

// lockPasswordFiles takes the lock shadow-utils and glibc's lckpwdf take
// before they change the password files: a write lock on the whole of
// <root>/etc/.pwd.lock, waiting up to lockTimeout as lckpwdf does. Salt
// takes none; without it a concurrent usermod or chpasswd could lose its
// change, or this one, to the other's rewrite.
func lockPasswordFiles(ctx context.Context, root string) (func(), error) {
	path := filepath.Join(root, "etc/.pwd.lock")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock password files: %w", err)
	}
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0}
	ctx, cancel := context.WithTimeout(ctx, lockTimeout)
	defer cancel()
	for {
		err = unix.FcntlFlock(f.Fd(), unix.F_SETLK, &lk)
		if err == nil {
			return func() { f.Close() }, nil // closing releases the lock
		}
		if !errors.Is(err, unix.EAGAIN) && !errors.Is(err, unix.EACCES) && !errors.Is(err, unix.EINTR) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("lock %s: held by another process: %w", path, context.Cause(ctx))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// warn logs a warning of the job, as Salt's log.warning.
func warn(c *modules.Call, msg string) {
	if c.Env != nil && c.Env.Log != nil {
		c.Env.Log.Warn(msg)
	}
}

// isTrue is salt.utils.data.is_true: True, numbers above zero and the
// string "true" in any case (or a number above zero as a string).
func isTrue(v any) bool {
	switch x := v.(type) {
	case bool:
		return x
	case int:
		return x > 0
	case float64:
		return x > 0
	case string:
		if f, err := strconv.ParseFloat(x, 64); err == nil {
			return f > 0
		}
		return strings.EqualFold(x, "true")
	}
	return modules.Truthy(v)
}
