package filestate

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/modules/file"
	"github.com/brinesalt/brine/state/states"
)

var symlinkSpec = spec(true, modules.Param{Name: "target"},
	opt("force", false), opt("backupname", nil), opt("makedirs", false), opt("user", nil),
	opt("group", nil), opt("mode", nil), opt("atomic", false), opt("disallow_copy_and_unlink", false),
	opt("inherit_user_and_group", false))

var copySpec = spec(true, modules.Param{Name: "source"}, opt("force", false), opt("makedirs", false),
	opt("preserve", false), opt("user", nil), opt("group", nil), opt("mode", nil),
	opt("dir_mode", nil), opt("subdir", false))

// absent is file.absent.
func absent(_ context.Context, c *states.Call) (*states.Result, error) {
	name := expandUser(c.Str("name"))
	r := states.NewResult(name, states.True, "")
	switch {
	case name == "":
		return fail(name, "Must provide name to file.absent"), nil
	case !filepath.IsAbs(name):
		return fail(name, fmt.Sprintf("Specified file %s is not an absolute path", name)), nil
	case name == "/":
		return fail(name, `Refusing to make "/" absent`), nil
	}
	kind := ""
	if isFile(name) || isLink(name) {
		kind = "file"
	} else if isDir(name) {
		kind = "directory"
	}
	if kind == "" {
		r.Comment = fmt.Sprintf("File %s is not present", name)
		return r, nil
	}
	if c.Env.Test {
		r.Result = states.None
		r.Changes.Set("removed", name)
		r.Comment = fmt.Sprintf("%s %s is set for removal", upperFirst(kind), name)
		return r, nil
	}
	if err := os.RemoveAll(name); err != nil {
		if kind == "directory" {
			return fail(name, fmt.Sprintf("Failed to remove directory %s", name)), nil
		}
		return fail(name, err.Error()), nil
	}
	r.Comment = fmt.Sprintf("Removed %s %s", kind, name)
	r.Changes.Set("removed", name)
	return r, nil
}

func upperFirst(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

// exists is file.exists.
func exists(_ context.Context, c *states.Call) (*states.Result, error) {
	name := expandUser(c.Str("name"))
	if name == "" {
		return fail(name, "Must provide name to file.exists"), nil
	}
	if !pathExists(name) {
		return fail(name, fmt.Sprintf("Specified path %s does not exist", name)), nil
	}
	return states.NewResult(name, states.True, fmt.Sprintf("Path %s exists", name)), nil
}

// missing is file.missing.
func missing(_ context.Context, c *states.Call) (*states.Result, error) {
	name := expandUser(c.Str("name"))
	if name == "" {
		return fail(name, "Must provide name to file.missing"), nil
	}
	if pathExists(name) {
		return fail(name, fmt.Sprintf("Specified path %s exists", name)), nil
	}
	return states.NewResult(name, states.True, fmt.Sprintf("Path %s is missing", name)), nil
}

// touch is file.touch. Its result stays unset (None) in a few error
// paths, as Salt's ret has no "result" key there.
func touch(_ context.Context, c *states.Call) (*states.Result, error) {
	name := expandUser(c.Str("name"))
	if name == "" {
		return fail(name, "Must provide name to file.touch"), nil
	}
	if !filepath.IsAbs(name) {
		return fail(name, fmt.Sprintf("Specified file %s is not an absolute path", name)), nil
	}
	atime, mtime := c.Arg("atime"), c.Arg("mtime")
	if c.Env.Test {
		return checkTouch(name, atime, mtime), nil
	}
	if c.Bool("makedirs") {
		if _, err := file.Makedirs(name, nil, nil, nil, false); err != nil {
			return nil, err
		}
	}
	if !isDir(filepath.Dir(name)) {
		return fail(name, fmt.Sprintf("Directory not present to touch file %s", name)), nil
	}
	extant := pathExists(name)
	if err := file.Touch(name, atime, mtime); err != nil {
		return fail(name, err.Error()), nil
	}
	r := states.NewResult(name, states.True, "")
	if !extant {
		r.Comment = fmt.Sprintf("Created empty file %s", name)
		r.Changes.Set("new", name)
	} else {
		kind := "file"
		if isDir(name) {
			kind = "directory"
		}
		r.Comment = fmt.Sprintf("Updated times on %s %s", kind, name)
		r.Changes.Set("touched", name)
	}
	return r, nil
}

// checkTouch is _check_touch.
func checkTouch(name string, atime, mtime any) *states.Result {
	r := states.NewResult(name, states.None, "")
	r.Changes.Set("new", name)
	if !pathExists(name) {
		r.Comment = fmt.Sprintf("File %s is set to be created", name)
		return r
	}
	st, err := file.Stats(name, "", false)
	if err == nil && ((atime != nil && py.Str(atime) != py.Str(st.Atime)) || (mtime != nil && py.Str(mtime) != py.Str(st.Mtime))) {
		r.Comment = fmt.Sprintf("Times set to be updated on file %s", name)
		r.Changes = ordered.FromPairs("touched", name)
		return r
	}
	r.Result = states.True
	r.Comment = fmt.Sprintf("File %s exists and has the correct times", name)
	return r
}

// defaultOwner is symlink's and copy's default owner: the minion's user
// (opts "user", else the process's) and that user's primary group.
func defaultOwner(c *states.Call, usr, grp any) (any, any) {
	if usr == nil {
		if u, ok := c.Env.Opts.Value("user").(string); ok && u != "" {
			usr = u
		} else if cu, err := user.Current(); err == nil {
			usr = cu.Username
		}
	}
	if grp == nil {
		grp = usr
		if u, err := user.Lookup(py.Str(usr)); err == nil {
			if g, err := user.LookupGroupId(u.Gid); err == nil {
				grp = g.Name
			}
		}
	}
	return usr, grp
}

// symlinkOwner returns the symlink's own user and group names.
func symlinkOwner(name string) (string, string) {
	st, err := file.Stats(name, "", false)
	if err != nil {
		return "", ""
	}
	return fmt.Sprint(st.User), fmt.Sprint(st.Group)
}

// symlink is file.symlink.
func symlink(_ context.Context, c *states.Call) (*states.Result, error) {
	name := expandUser(c.Str("name"))
	target := c.Str("target")
	if name == "" {
		return fail(name, "Must provide name to file.symlink"), nil
	}
	mode := normMode(c.Arg("mode"))
	usr, grp := owner(c), c.Arg("group")
	if c.Bool("inherit_user_and_group") && (usr == nil || grp == nil) && isLink(name) {
		cu, cg := symlinkOwner(name)
		if usr == nil {
			usr = cu
		}
		if grp == nil {
			grp = cg
		}
	}
	usr, grp = defaultOwner(c, usr, grp)
	var pre []string
	if _, ok := file.UserToUID(usr); !ok {
		pre = append(pre, fmt.Sprintf("User %s does not exist", py.Str(usr)))
	}
	if _, ok := file.GroupToGID(grp); !ok {
		pre = append(pre, fmt.Sprintf("Group %s does not exist", py.Str(grp)))
	}
	if !filepath.IsAbs(name) {
		pre = append(pre, fmt.Sprintf("Specified file %s is not an absolute path", name))
	}
	if len(pre) > 0 {
		msg := strings.Join(pre, ". ")
		if len(pre) > 1 {
			msg += "."
		}
		return fail(name, msg), nil
	}
	force := c.Bool("force")
	tresult, tcomment, tchanges := symlinkCheck(name, target, force, py.Str(usr), py.Str(grp))
	dir := filepath.Dir(name)
	if !isDir(dir) {
		switch {
		case c.Bool("makedirs") && c.Env.Test:
			tcomment += fmt.Sprintf("\n%s will be created", dir)
		case c.Bool("makedirs"):
			if _, err := file.Makedirs(name, usr, grp, mode, false); err != nil {
				return nil, err
			}
		case c.Env.Test:
			tcomment += fmt.Sprintf("\nDirectory %s for symlink is not present", dir)
		default:
			return fail(name, fmt.Sprintf("Directory %s for symlink is not present", dir)), nil
		}
	}
	if c.Env.Test {
		r := states.NewResult(name, tresult, tcomment)
		r.Changes = tchanges
		return r, nil
	}
	return symlinkApply(c, name, target, usr, grp)
}

func symlinkApply(c *states.Call, name, target string, usr, grp any) (*states.Result, error) {
	r := states.NewResult(name, states.True, "")
	ug := py.Str(usr) + ":" + py.Str(grp)
	if isLink(name) {
		cur, _ := os.Readlink(name)
		if filepath.Clean(cur) != filepath.Clean(target) {
			_ = os.Remove(name)
		} else {
			cu, cg := symlinkOwner(name)
			if cu == py.Str(usr) && cg == py.Str(grp) {
				r.Comment = fmt.Sprintf("Symlink %s is present and owned by %s", name, ug)
			} else if msg, err := file.Chown(name, usr, grp, true); err == nil && msg == "" {
				r.Comment = fmt.Sprintf("Set ownership of symlink %s to %s", name, ug)
				r.Changes.Set("ownership", ug)
			} else {
				r.Result = states.False
				r.Comment += fmt.Sprintf("Failed to set ownership of symlink %s to %s", name, ug)
			}
			return r, nil
		}
	} else if pathExists(name) {
		if res := symlinkMakeWay(c, name, target); res != nil {
			return res, nil
		}
	}
	if err := file.Symlink(target, name, c.Bool("force"), c.Bool("atomic")); err != nil {
		r.Result = states.False
		r.Comment = fmt.Sprintf("Unable to create new symlink %s -> %s: %s", name, target, err.Error())
		return r, nil
	}
	r.Comment = fmt.Sprintf("Created new symlink %s -> %s", name, target)
	r.Changes.Set("new", name)
	if msg, err := file.Chown(name, usr, grp, true); err != nil || msg != "" {
		r.Result = states.False
		r.Comment += fmt.Sprintf(", but was unable to set ownership to %s", ug)
	}
	return r, nil
}

// symlinkMakeWay moves or refuses an existing file at the link's place.
func symlinkMakeWay(c *states.Call, name, target string) *states.Result {
	force := c.Bool("force")
	if b, ok := strArg(c, "backupname"); ok {
		if !filepath.IsAbs(b) {
			if b != filepath.Base(b) {
				return fail(name, fmt.Sprintf("Backupname must be an absolute path or a file name: %s", b))
			}
			b = filepath.Join(filepath.Dir(filepath.Clean(name)), b)
		}
		if _, err := os.Lstat(b); err == nil {
			if !force {
				return fail(name, fmt.Sprintf("Symlink & backup dest exists and Force not set. %s -> %s - backup: %s", name, target, b))
			}
			_ = os.RemoveAll(b)
		}
		if err := os.Rename(name, b); err != nil {
			return fail(name, fmt.Sprintf("Unable to rename %s to backup %s -> : %s", name, b, err.Error()))
		}
		return nil
	}
	if !force && !c.Bool("atomic") {
		kind := "File system entry"
		if isFile(name) {
			kind = "File"
		} else if isDir(name) {
			kind = "Directory"
		}
		return fail(name, fmt.Sprintf("%s exists where the symlink %s should be", kind, name))
	}
	return nil
}

// symlinkCheck is _symlink_check.
func symlinkCheck(name, target string, force bool, usr, grp string) (states.Tri, string, *ordered.Map) {
	ch := ordered.New()
	if !pathExists(name) && !isLink(name) {
		ch.Set("new", name)
		return states.None, fmt.Sprintf("Symlink %s to %s is set for creation", name, target), ch
	}
	if isLink(name) {
		cur, _ := os.Readlink(name)
		if cur != target {
			ch.Set("change", name)
			return states.None, fmt.Sprintf("Link %s target is set to be changed to %s", name, target), ch
		}
		msg := fmt.Sprintf("The symlink %s is present", name)
		cu, cg := symlinkOwner(name)
		if cu != usr || cg != grp {
			ch.Set("ownership", cu+":"+cg)
			msg += fmt.Sprintf(", but the ownership of the symlink would be changed from %s:%s to %s:%s", cu, cg, usr, grp)
			return states.None, msg, ch
		}
		return states.True, msg, ch
	}
	if force {
		return states.None, fmt.Sprintf("The file or directory %s is set for removal to make way for a new symlink targeting %s", name, target), ch
	}
	return states.False, fmt.Sprintf("File or directory exists where the symlink %s should be. Did you mean to use force?", name), ch
}

// copyState is file.copy.
func copyState(_ context.Context, c *states.Call) (*states.Result, error) {
	name, source := expandUser(c.Str("name")), expandUser(c.Str("source"))
	r := states.NewResult(name, states.True, fmt.Sprintf(`Copied "%s" to "%s"`, source, name))
	switch {
	case name == "":
		return fail(name, "Must provide name to file.copy"), nil
	case !filepath.IsAbs(name):
		return fail(name, fmt.Sprintf("Specified file %s is not an absolute path", name)), nil
	case !pathExists(source):
		return fail(name, fmt.Sprintf(`Source file "%s" is not present`, source)), nil
	}
	usr, grp, mode, res, err := copyOwner(c, name, source)
	if res != nil || err != nil {
		return res, err
	}
	if isDir(name) && c.Bool("subdir") {
		name = filepath.Join(name, filepath.Base(source))
	}
	changed, res := copyTarget(c, r, name, source)
	if res != nil {
		return res, nil
	}
	if c.Env.Test || !changed {
		if changed {
			r.Result, r.Comment = states.None, fmt.Sprintf(`File "%s" is set to be copied to "%s"`, source, name)
		} else {
			r.Comment = fmt.Sprintf(`The target file "%s" exists and will not be overwritten`, name)
		}
		return r, nil
	}
	if dir := filepath.Dir(name); !isDir(dir) {
		if !c.Bool("makedirs") {
			return fail(name, fmt.Sprintf("The target directory %s is not present", dir)), nil
		}
		dirMode := c.Arg("dir_mode")
		if dirMode == nil && mode != nil {
			dirMode = dirModeOf(mode)
		}
		if _, err := file.Makedirs(name, usr, grp, dirMode, false); err != nil {
			return nil, err
		}
	}
	if err := copyPath(source, name, usr, grp); err != nil {
		return fail(name, fmt.Sprintf(`Failed to copy "%s" to "%s"`, source, name)), nil
	}
	r.Changes = ordered.FromPairs(name, source)
	if !c.Bool("preserve") {
		ret := &file.Ret{Name: name, Result: true, Comment: r.Comment, Changes: r.Changes}
		if ret, _, err = file.CheckPerms(name, ret, usr, grp, mode, false, false); err != nil {
			return nil, err
		}
		if ret.Result == false {
			r.Result, r.Comment = states.False, ret.Comment
		}
	}
	return r, nil
}

// copyOwner is copy's owner and mode: the source's with preserve, else
// the given ones (defaulting to the minion user and the source's mode).
func copyOwner(c *states.Call, name, source string) (usr, grp, mode any, res *states.Result, err error) {
	st, err := file.Stats(source, "", true)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	if c.Bool("preserve") {
		return st.User, st.Group, st.Mode, nil, nil
	}
	usr, grp = defaultOwner(c, owner(c), c.Arg("group"))
	if msg := checkUser(c, usr, grp); msg != "" {
		return nil, nil, nil, fail(name, msg), nil
	}
	if mode = normMode(c.Arg("mode")); mode == nil {
		mode = st.Mode
	}
	return usr, grp, mode, nil, nil
}

// copyTarget decides what an existing target means: without force it
// stays; with force it is removed (outside test mode).
func copyTarget(c *states.Call, r *states.Result, name, source string) (bool, *states.Result) {
	if _, err := os.Lstat(name); err != nil {
		return true, nil
	}
	force := c.Bool("force")
	if force && isFile(name) {
		h1, _ := file.GetHash(name, "sha256")
		h2, _ := file.GetHash(source, "sha256")
		if h1 == h2 {
			r.Comment += " - files are identical but force flag is set"
		}
	}
	if !force {
		return false, nil
	}
	if !c.Env.Test {
		if err := os.RemoveAll(name); err != nil {
			return false, fail(name, fmt.Sprintf(`Failed to delete "%s" in preparation for forced move`, name))
		}
	}
	return true, nil
}

func dirModeOf(mode any) string {
	s := py.Str(mode)
	if len(s) > 3 {
		s = s[len(s)-3:]
	}
	b := []byte(s)
	for i, ch := range b {
		if ch > '0' && ch <= '9' {
			b[i] = '0' + ((ch - '0') | 1)
		}
	}
	return string(b)
}

// copyPath is shutil.copy for a file (content and mode bits) and
// shutil.copytree(symlinks=True) plus lchown for a directory.
func copyPath(src, dst string, usr, grp any) error {
	st, err := os.Stat(src)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return copyFileMode(src, dst, st.Mode())
	}
	return filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, rel)
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			l, err := os.Readlink(p)
			if err != nil {
				return err
			}
			err = os.Symlink(l, out)
			if err != nil {
				return err
			}
		case fi.IsDir():
			if err := os.MkdirAll(out, fi.Mode().Perm()); err != nil {
				return err
			}
		default:
			if err := copyFileMode(p, out, fi.Mode()); err != nil {
				return err
			}
		}
		if rel != "." {
			_, _ = file.Chown(out, usr, grp, true)
		}
		return nil
	})
}

func copyFileMode(src, dst string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode.Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Chmod(dst, mode&(os.ModePerm|os.ModeSetuid|os.ModeSetgid|os.ModeSticky))
}

func removeAll(p string) error { return os.RemoveAll(p) }

var renameSpec = spec(true, modules.Param{Name: "source"}, opt("force", false), opt("makedirs", false))

// renameState is file.rename.
func renameState(_ context.Context, c *states.Call) (*states.Result, error) {
	name := os.ExpandEnv(expandUser(c.Str("name")))
	source := os.ExpandEnv(expandUser(c.Str("source")))
	r := states.NewResult(name, states.True, "")
	if name == "" {
		return fail(name, "Must provide name to file.rename"), nil
	}
	if !filepath.IsAbs(name) {
		return fail(name, fmt.Sprintf("Specified file %s is not an absolute path", name)), nil
	}
	if _, err := os.Lstat(source); err != nil {
		r.Comment = fmt.Sprintf(`Source file "%s" has already been moved out of place`, source)
		return r, nil
	}
	if _, err := os.Lstat(name); err == nil {
		if !c.Bool("force") {
			r.Comment = fmt.Sprintf(`The target file "%s" exists and will not be overwritten`, name)
			return r, nil
		}
		if !c.Env.Test {
			if err := os.RemoveAll(name); err != nil {
				return fail(name, fmt.Sprintf(`Failed to delete "%s" in preparation for forced move`, name)), nil
			}
		}
	}
	if c.Env.Test {
		r.Result, r.Comment = states.None, fmt.Sprintf(`File "%s" is set to be moved to "%s"`, source, name)
		return r, nil
	}
	if dir := filepath.Dir(name); !isDir(dir) {
		if !c.Bool("makedirs") {
			return fail(name, fmt.Sprintf("The target directory %s is not present", dir)), nil
		}
		if _, err := file.Makedirs(name, nil, nil, nil, false); err != nil {
			return nil, err
		}
	}
	if err := moveFile(source, name); err != nil {
		return fail(name, fmt.Sprintf(`Failed to move "%s" to "%s"`, source, name)), nil
	}
	r.Comment = fmt.Sprintf(`Moved "%s" to "%s"`, source, name)
	r.Changes = ordered.FromPairs(name, source)
	return r, nil
}

// moveFile is shutil.move: rename, or copy and remove across devices.
func moveFile(src, dst string) error {
	if err := os.Rename(src, dst); err == nil {
		return nil
	}
	if err := copyPath(src, dst, nil, nil); err != nil {
		return err
	}
	return os.RemoveAll(src)
}
