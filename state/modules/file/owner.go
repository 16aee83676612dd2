package file

import (
	"encoding/hex"
	"errors"
	"hash"
	"io"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/brinesalt/brine/internal/crypt"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
)

// Stat is the dict file.stats returns.
type Stat struct {
	Inode               uint64
	UID, GID            int
	User, Group         any // name, or the numeric id when it has no name
	Atime, Mtime, Ctime float64
	Size                int64
	Mode                string // "0644"
	Type                string // file, dir, link, char, block, pipe, socket
	Target              string
	Sum                 string

	path string // for Target, resolved only when Map needs it
}

// Map returns s in file.stats' key order.
func (s *Stat) Map() *ordered.Map {
	m := ordered.FromPairs("inode", int(s.Inode), "uid", s.UID, "gid", s.GID,
		"group", s.Group, "user", s.User, "atime", s.Atime, "mtime", s.Mtime,
		"ctime", s.Ctime, "size", int(s.Size), "mode", s.Mode)
	if s.Sum != "" {
		m.Set("sum", s.Sum)
	}
	m.Set("type", s.Type)
	if s.Target == "" && s.path != "" {
		s.Target = realPath(s.path)
	}
	m.Set("target", s.Target)
	return m
}

// Stats is file.stats: a missing path (that is not a broken symlink) is
// the CommandExecutionError "Path not found: <path>", which file.directory
// relies on.
func Stats(path, hashType string, follow bool) (*Stat, error) {
	// A path that does not stat (a broken symlink) or is not followed is
	// lstat'ed.
	fi, err := os.Stat(path)
	if err != nil || !follow {
		fi, err = os.Lstat(path)
	}
	if err != nil {
		return nil, modules.Errorf("Path not found: %s", path)
	}
	st := statOf(path, fi)
	s := &Stat{
		Inode: st.Ino, UID: st.UID, GID: st.GID,
		User: UIDToUser(st.UID), Group: GIDToGroup(st.GID),
		Size: st.Size, Mode: octalMode(st.Mode & 0o7777), Type: fileType(st.Mode),
		Atime: st.Atime, Mtime: st.Mtime, Ctime: st.Ctime,
	}
	s.path = path
	if hashType != "" {
		if s.Sum, err = GetHash(path, hashType); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func fileType(m uint32) string {
	switch m & syscall.S_IFMT {
	case syscall.S_IFDIR:
		return "dir"
	case syscall.S_IFCHR:
		return "char"
	case syscall.S_IFBLK:
		return "block"
	case syscall.S_IFLNK:
		return "link"
	case syscall.S_IFIFO:
		return "pipe"
	case syscall.S_IFSOCK:
		return "socket"
	}
	return "file"
}

// realPath is os.path.realpath: symlinks resolved as far as they go.
func realPath(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		return r
	}
	return abs
}

// UIDToUser is file.uid_to_user: the name, or the uid itself.
func UIDToUser(uid int) any {
	return userNames.name(uid, func(id string) (string, error) {
		u, err := user.LookupId(id)
		if err != nil {
			return "", err
		}
		return u.Username, nil
	})
}

// GIDToGroup is file.gid_to_group: the name, or the gid itself.
func GIDToGroup(gid int) any {
	return groupNames.name(gid, func(id string) (string, error) {
		g, err := user.LookupGroupId(id)
		if err != nil {
			return "", err
		}
		return g.Name, nil
	})
}

// UserToUID is file.user_to_uid: an int passes through, a name is looked
// up; ok is false for an unknown user (Salt returns "").
func UserToUID(u any) (int, bool) {
	switch v := u.(type) {
	case int:
		return v, true
	case nil:
		return os.Getuid(), true
	}
	pw, err := user.Lookup(ordered.KeyString(u))
	if err != nil {
		return 0, false
	}
	n, err := strconv.Atoi(pw.Uid)
	return n, err == nil
}

// GroupToGID is file.group_to_gid.
func GroupToGID(g any) (int, bool) {
	switch v := g.(type) {
	case int:
		return v, true
	case nil:
		return 0, false
	}
	gr, err := user.LookupGroup(ordered.KeyString(g))
	if err != nil {
		return 0, false
	}
	n, err := strconv.Atoi(gr.Gid)
	return n, err == nil
}

// Chown is file.chown (lchown when link is set): "" on success, else the
// accumulated "User does not exist\n", "Group does not exist\n" and
// "File not found" text Salt returns instead of raising.
func Chown(path string, usr, grp any, link bool) (string, error) {
	uid, gid := -1, -1
	var msg string
	if modules.Truthy(usr) || usr == 0 {
		if n, ok := UserToUID(usr); ok {
			uid = n
		} else {
			msg += "User does not exist\n"
		}
	}
	if modules.Truthy(grp) || grp == 0 {
		if n, ok := GroupToGID(grp); ok {
			gid = n
		} else {
			msg += "Group does not exist\n"
		}
	}
	if _, err := os.Stat(path); err != nil && !link {
		if os.Lchown(path, uid, gid) == nil {
			return "", nil
		}
		msg += "File not found"
	}
	if msg != "" {
		return msg, nil
	}
	if link {
		return "", os.Lchown(path, uid, gid)
	}
	return "", os.Chown(path, uid, gid)
}

// SetMode is file.set_mode: it returns the new mode, or Salt's
// "Invalid Mode <m>" text for a mode that does not parse.
func SetMode(path string, mode string) (string, error) {
	if _, err := os.Stat(path); err != nil {
		return "", modules.Errorf("%s: File not found", path)
	}
	m, err := ParseMode(mode)
	if err != nil {
		return err.Error(), nil
	}
	if err := os.Chmod(path, m); err != nil {
		return "", modules.Errorf("chmod %s: %w", path, err)
	}
	// Only the mode is wanted back: a plain stat, not file.stats' owner
	// name lookups.
	fi, err := os.Stat(path)
	if err != nil {
		return "", modules.Errorf("Path not found: %s", path)
	}
	return octalMode(statOf(path, fi).Mode & 0o7777), nil
}

// newHash is crypt.NewHash with Salt's file-module error text.
func newHash(form string) (hash.Hash, error) {
	h, err := crypt.NewHash(form)
	if err != nil {
		return nil, modules.Errorf("Invalid hash type '%s'", form)
	}
	return h, nil
}

// GetHash is file.get_hash: the hex digest of path.
func GetHash(path, form string) (string, error) {
	h, err := newHash(form)
	if err != nil {
		return "", err
	}
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", modules.Errorf("Path not found: %s", path)
		}
		return "", modules.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	if _, err := io.Copy(h, f); err != nil {
		return "", modules.Errorf("read %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// HashBytes returns the hex digest of b.
func HashBytes(b []byte, form string) (string, error) {
	h, err := newHash(form)
	if err != nil {
		return "", err
	}
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil)), nil
}
