package file

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
)

// Source is the file a managed file is built from: the chosen source
// URL and, once fetched (and rendered), its bytes. Salt keeps these as a
// cached path (sfn); Brine keeps the bytes.
type Source struct {
	URL     string
	Data    []byte
	Fetched bool
}

// SourceList is file.source_list: for a list of sources, the first one
// that exists (a salt:// URL on the file server or an absolute local
// path), else the CommandExecutionError "none of the specified sources
// were found". A single source is returned as it is. List items may be
// one-key mappings of source to source_hash.
func SourceList(ctx context.Context, env *modules.Env, source any, sourceHash, saltenv string) (string, string, error) {
	list, ok := source.([]any)
	if !ok {
		if source == nil {
			return "", sourceHash, nil
		}
		return ordered.KeyString(source), sourceHash, nil
	}
	for _, item := range list {
		src, hash := "", sourceHash
		if m, ok := item.(*ordered.Map); ok {
			if m.Len() != 1 {
				continue
			}
			k := m.Keys()[0]
			src = ordered.KeyString(k)
			if h := m.Value(k); modules.Truthy(h) {
				hash = ordered.KeyString(h)
			}
		} else {
			src = ordered.KeyString(item)
		}
		if sourceExists(ctx, env, src, saltenv) {
			return src, hash, nil
		}
	}
	return "", "", modules.Errorf("none of the specified sources were found")
}

func sourceExists(ctx context.Context, env *modules.Env, src, saltenv string) bool {
	switch {
	case strings.HasPrefix(src, "salt://"):
		if env.Files == nil {
			return false
		}
		_, err := env.Files.Get(ctx, src, saltenv)
		return err == nil
	case strings.HasPrefix(src, "file://"):
		_, err := os.Stat(strings.TrimPrefix(src, "file://"))
		return err == nil
	case strings.HasPrefix(src, "/"), filepath.IsAbs(src):
		_, err := os.Stat(src)
		return err == nil
	}
	return false
}

// FetchSource reads a salt://, file:// or local source. The comment is
// get_managed's message for a missing one ("Source file salt://x not
// found in saltenv 'base'", "Local file source /x does not exist"); err
// is for sources Brine cannot fetch at all.
func FetchSource(ctx context.Context, env *modules.Env, src, saltenv string) (data []byte, comment string, err error) {
	switch {
	case strings.HasPrefix(src, "salt://"):
		if env.Files == nil {
			return nil, fmt.Sprintf("Source file %s not found in saltenv '%s'", src, saltenv), nil
		}
		b, err := env.Files.Get(ctx, src, saltenv)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Sprintf("Source file %s not found in saltenv '%s'", src, saltenv), nil
		}
		if err != nil {
			return nil, "", fmt.Errorf("fetch %s: %w", src, err)
		}
		return b, "", nil
	case strings.HasPrefix(src, "file://") || !strings.Contains(src, "://"):
		p := strings.TrimPrefix(src, "file://")
		b, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Sprintf("Local file source %s does not exist", p), nil
		}
		if err != nil {
			return nil, "", fmt.Errorf("read %s: %w", p, err)
		}
		return b, "", nil
	}
	return FetchRemote(ctx, env, src, saltenv)
}

// Manage is manage_file's arguments.
type Manage struct {
	Name        string
	Source      *Source // nil without a source
	User, Group any
	Mode        any
	Backup      string // the state's backup argument; "" falls back to opts backup_mode
	Makedirs    bool
	ShowChanges bool
	Contents    *string
	DirMode     any
	Follow      bool
	Test        bool
	Opts        *ordered.Map
}

// ManageFile is file.manage_file: bring Name to the source's bytes or
// to Contents, report the diff and the permission changes in ret.
func ManageFile(m Manage, ret *Ret) (*Ret, error) {
	if ret == nil {
		ret = NewRet(m.Name)
	}
	name := expandUser(m.Name)
	fi, err := os.Lstat(name)
	isLink := err == nil && fi.Mode()&os.ModeSymlink != 0
	switch {
	case isLink && !m.Follow:
		return replaceLink(m, name, ret)
	case err == nil && (fi.Mode().IsRegular() || isLink):
		return manageExisting(m, name, ret, isLink)
	}
	return manageNew(m, name, ret)
}

// replaceLink is manage_file on a symlink with follow_symlinks False:
// the link itself is replaced by a regular file.
func replaceLink(m Manage, name string, ret *Ret) (*Ret, error) {
	var data []byte
	switch {
	case m.Source != nil:
		data = m.Source.Data
	case m.Contents != nil:
		data = []byte(*m.Contents)
	default:
		return manageExisting(m, name, ret, true)
	}
	if err := CopyFile(data, name, backupMode(m), m.Opts); err != nil {
		return ret.Fail(fmt.Sprintf("Failed to commit change: %s", err)), nil
	}
	ret.Changes.Set("diff", "Replace symbolic link with regular file")
	ret, _, err := CheckPerms(name, ret, m.User, m.Group, m.Mode, m.Follow, m.Test)
	if err != nil {
		return ret, err
	}
	ret.Comment = fmt.Sprintf("File %s updated", name)
	return ret, nil
}

// manageExisting updates an existing file; isLink reports that name
// itself is a symlink. Only then, or for a backup (named after the real
// path, as Salt names it), is the real path worth resolving: a
// symlinked parent directory leads to the same file either way.
func manageExisting(m Manage, name string, ret *Ret, isLink bool) (*Ret, error) {
	real := name
	backup := backupMode(m)
	if m.Follow && (isLink || backup != "") {
		real = realPath(name)
	}
	cur, err := os.ReadFile(real)
	if err != nil {
		return ret.Fail(fmt.Sprintf("Failed to commit change: %s", err)), nil
	}
	var want []byte
	switch {
	case m.Source != nil:
		want = m.Source.Data
	case m.Contents != nil:
		want = []byte(*m.Contents)
	}
	if want != nil && string(cur) != string(want) {
		if !m.ShowChanges {
			ret.Changes.Set("diff", "<show_changes=False>")
		} else if d := Diff(cur, want); d != "" {
			ret.Changes.Set("diff", d)
		}
		if err := CopyFile(want, real, backup, m.Opts); err != nil {
			return ret.Fail(fmt.Sprintf("Failed to commit change: %s", err)), nil
		}
	}
	ret, _, err = CheckPerms(name, ret, m.User, m.Group, m.Mode, m.Follow, m.Test)
	if err != nil {
		return ret, err
	}
	if ret.Changes.Len() > 0 {
		ret.Comment = fmt.Sprintf("File %s updated", name)
	} else if ret.Result == true {
		ret.Comment = fmt.Sprintf("File %s is in the correct state", name)
	}
	return ret, nil
}

func manageNew(m Manage, name string, ret *Ret) (*Ret, error) {
	if m.Source != nil {
		ret.Changes.Set("diff", "New file")
	}
	if st, err := os.Stat(filepath.Dir(name)); err != nil || !st.IsDir() {
		if !m.Makedirs {
			ret.Changes.Delete("diff")
			return ret.Fail("Parent directory not present"), nil
		}
		dirMode := m.DirMode
		if dirMode == nil && m.Mode != nil {
			dirMode = dirModeFor(m.Mode)
		}
		if _, err := Makedirs(name, m.User, m.Group, dirMode, m.Test); err != nil {
			return ret, err
		}
	}
	// The umask only matters without a mode; reading it costs a read of
	// /proc/self/status per file.
	var umask uint32
	if m.Mode == nil {
		umask = Umask()
	}
	// newMode is set when the new file's contents are written straight
	// into it below: Salt touches the file (with these permissions) and
	// then copies the contents over it; one atomic write with the same
	// permissions gives the same file with one file creation instead of two.
	var newMode os.FileMode
	if m.Source == nil && !m.Test {
		fileMask := umask
		if m.Mode != nil {
			fileMask = 0o077
		}
		if m.Contents == nil {
			if err := touchNew(name, fileMask); err != nil {
				return ret.Fail(fmt.Sprintf("File %s not created", name)), nil
			}
			ret.Changes.Set("new", fmt.Sprintf("file %s created", name))
			ret.Comment = "Empty file"
		} else {
			newMode = os.FileMode(0o666 &^ fileMask)
			ret.Changes.Set("diff", "New file")
		}
	}
	var data []byte
	switch {
	case m.Contents != nil:
		data = []byte(*m.Contents)
	case m.Source != nil:
		data = m.Source.Data
	}
	if data != nil || m.Source != nil {
		write := func() error { return CopyFile(data, name, backupMode(m), m.Opts) }
		if newMode != 0 {
			write = func() error { return writeNew(data, name, newMode) }
		}
		if err := write(); err != nil {
			return ret.Fail(fmt.Sprintf("Failed to commit change: %s", err)), nil
		}
	}
	mode := m.Mode
	if mode == nil {
		mode = "0o" + strconv.FormatUint(uint64(0o666&^umask), 8)
	}
	if _, err := os.Lstat(name); err == nil {
		var err error
		if ret, _, err = CheckPerms(name, ret, m.User, m.Group, mode, true, m.Test); err != nil {
			return ret, err
		}
	}
	if ret.Comment == "" {
		ret.Comment = "File " + name + " updated"
	}
	if m.Test {
		ret.Comment = "File " + name + " not updated"
	} else if ret.Changes.Len() == 0 && ret.Result == true {
		ret.Comment = "File " + name + " is in the correct state"
	}
	return ret, nil
}

// dirModeFor is manage_file's derived dir_mode: the last three digits of
// mode with the execute bit added to each digit that is not 0.
func dirModeFor(mode any) string {
	s := ordered.KeyString(mode)
	if len(s) > 3 {
		s = s[len(s)-3:]
	}
	b := []byte(s)
	for i, c := range b {
		if c != '0' && c >= '0' && c <= '9' {
			n := int(c-'0') | 1
			b[i] = byte('0' + n)
		}
	}
	return string(b)
}

// writeNew creates name with data and perm through a temporary file in
// the same directory, so the file appears whole or not at all.
func writeNew(data []byte, name string, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(name), filepath.Base(name))
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(perm)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), name)
	}
	if err != nil {
		// Only a failed write leaves the temporary file behind.
		os.Remove(tmp.Name())
	}
	return err
}

func touchNew(name string, mask uint32) error {
	f, err := os.OpenFile(name, os.O_CREATE|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Chmod(name, os.FileMode(0o666&^mask))
}

func backupMode(m Manage) string {
	if m.Backup != "" {
		return m.Backup
	}
	if s, ok := m.Opts.Value("backup_mode").(string); ok {
		return s
	}
	return ""
}

// CopyFile is salt.utils.files.copyfile with bytes for the source: write
// a temporary file (mode 0600) beside dest, back dest up when
// backupMode is "minion" or "both", rename over dest and give the new
// file dest's former owner and mode when dest existed.
func CopyFile(data []byte, dest, backupMode string, opts *ordered.Map) error {
	dir := filepath.Dir(dest)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("[Errno 2] No such file or directory: %s", dest)
	}
	tmp, err := os.CreateTemp(dir, filepath.Base(dest))
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	prev, statErr := os.Stat(dest)
	if err == nil && statErr == nil && (backupMode == "minion" || backupMode == "both") {
		err = backupMinion(dest, BackupRoot(opts))
	}
	if err == nil {
		err = os.Rename(tmp.Name(), dest)
	}
	if err != nil {
		// Only a failed copy leaves the temporary file behind.
		os.Remove(tmp.Name())
		return err
	}
	if statErr == nil {
		if err := keepOwner(dest, prev); err != nil {
			return err
		}
		return os.Chmod(dest, prev.Mode()&(os.ModePerm|os.ModeSetuid|os.ModeSetgid|os.ModeSticky))
	}
	return nil
}

// BackupRoot is <cachedir>/file_backup, where minion backups go.
func BackupRoot(opts *ordered.Map) string {
	cachedir, _ := opts.Value("cachedir").(string)
	if cachedir == "" {
		cachedir = "/var/cache/salt/minion"
	}
	return filepath.Join(cachedir, "file_backup")
}

// backupMinion is salt.utils.files.backup_minion: copy path to
// bkroot/<dir>/<base>_<Day_Mon_DD_HH:MM:SS_micros_YYYY>.
func backupMinion(path, bkroot string) error {
	dname, bname := filepath.Split(path)
	now := time.Now()
	stamp := fmt.Sprintf("%s%06d_%d", now.Format("Mon_Jan_02_15:04:05_"), now.Nanosecond()/1000, now.Year())
	bk := filepath.Join(bkroot, strings.TrimPrefix(dname, "/"), bname+"_"+stamp)
	if err := os.MkdirAll(filepath.Dir(bk), 0o755); err != nil {
		return err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if err := os.WriteFile(bk, b, fi.Mode().Perm()); err != nil {
		return err
	}
	_ = keepOwner(bk, fi)
	return os.Chmod(bk, fi.Mode())
}

// Makedirs is file.makedirs: create the missing parents of path (not
// path itself) with user, group and mode. It returns Salt's message when
// the parent already exists.
func Makedirs(path string, usr, grp, mode any, test bool) (string, error) {
	path = expandUser(path)
	if mode != nil {
		mode, _ = NormalizeMode(mode)
	}
	dir := filepath.Clean(filepath.Dir(path))
	if st, err := os.Stat(dir); err == nil {
		if st.IsDir() {
			return fmt.Sprintf("Directory '%s' already exists", dir), nil
		}
		return fmt.Sprintf("The path '%s' already exists and is not a directory", dir), nil
	}
	var todo []string
	for {
		if st, err := os.Stat(dir); err == nil && st.IsDir() {
			break
		}
		todo = append(todo, dir)
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", modules.Invalidf("Recursive creation for path '%s' would result in an infinite loop. Please use an absolute path.", dir)
		}
		dir = parent
	}
	for i := len(todo) - 1; i >= 0; i-- {
		if err := Mkdir(todo[i], usr, grp, mode, test); err != nil {
			return "", err
		}
	}
	return "", nil
}

// Mkdir is file.mkdir: create dir (and parents) unless it is a directory
// already, then apply user, group and mode as check_perms does.
func Mkdir(dir string, usr, grp, mode any, test bool) error {
	dir = filepath.Clean(expandUser(dir))
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		return nil
	}
	parent := filepath.Dir(dir)
	if _, err := os.Stat(parent); err != nil && parent != dir {
		if err := Mkdir(parent, usr, grp, mode, test); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, 0o777); err != nil && !errors.Is(err, fs.ErrExist) {
		return modules.Errorf("mkdir %s: %w", dir, err)
	}
	if mode != nil {
		mode = ordered.KeyString(mode)
	}
	_, _, err := CheckPerms(dir, nil, usr, grp, mode, false, test)
	return err
}

// CheckFileMeta is file.check_file_meta: the changes managing name would
// make, without making them. want is the new content (nil when the
// content is not managed).
func CheckFileMeta(name string, want []byte, usr, grp, mode any, follow bool) *ordered.Map {
	changes := ordered.New()
	st, err := Stats(name, "", follow)
	if err != nil {
		changes.Set("newfile", name)
		return changes
	}
	if want != nil {
		cur, err := os.ReadFile(name)
		if err != nil {
			changes.Set("diff", err.Error())
		} else if d := Diff(cur, want); d != "" {
			changes.Set("diff", d)
		}
	}
	if usr != nil && !ownerMatches(usr, st.User, st.UID) {
		changes.Set("user", usr)
	}
	if grp != nil && !ownerMatches(grp, st.Group, st.GID) {
		changes.Set("group", grp)
	}
	if m, ok := NormalizeMode(mode); ok && m != st.Mode {
		changes.Set("mode", m)
	}
	return changes
}
