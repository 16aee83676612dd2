package file

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/state/modules"
)

func init() { Register(modules.Default) }

func req(name string) modules.Param { return modules.Param{Name: name} }

func opt(name string, def any) modules.Param {
	return modules.Param{Name: name, Optional: true, Default: def}
}

func sig(params ...modules.Param) modules.Spec { return modules.Spec{Params: params} }

// Register adds the file execution functions to r.
func Register(r *modules.Registry) {
	reg := func(name, doc string, s modules.Spec, fn modules.Func) {
		r.Register(modules.Function{Name: "file." + name, Doc: doc, Spec: s, Fn: fn})
	}
	pathFollow := sig(req("path"), opt("follow_symlinks", true))
	reg("file_exists", "Return True if path is a regular file.", sig(req("path")), fileExists)
	reg("directory_exists", "Return True if path is a directory.", sig(req("path")), directoryExists)
	reg("get_hash", "Return the hash of a file.", sig(req("path"), opt("form", "sha256"), opt("chunk_size", 65536)), getHash)
	reg("get_sum", "Return the checksum of a file.", sig(req("path"), opt("form", "sha256")), getHash)
	reg("check_hash", "Check a file against a <type>:<hash> or bare hash.", sig(req("path"), req("file_hash")), checkHash)
	reg("stats", "Return a dict of a file's stats.", sig(req("path"), opt("hash_type", nil), opt("follow_symlinks", true)), stats)
	reg("lstat", "Return os.lstat of path.", sig(req("path")), lstat)
	reg("get_mode", "Return a file's mode.", pathFollow, statField("mode"))
	reg("get_user", "Return a file's owner name.", pathFollow, statField("user"))
	reg("get_group", "Return a file's group name.", pathFollow, statField("group"))
	reg("get_uid", "Return a file's owner uid.", pathFollow, statField("uid"))
	reg("get_gid", "Return a file's group gid.", pathFollow, statField("gid"))
	reg("set_mode", "Set a file's mode.", sig(req("path"), req("mode")), setMode)
	reg("chown", "Set a file's owner and group.", sig(req("path"), req("user"), req("group")), chown(false))
	reg("lchown", "Set a symlink's owner and group.", sig(req("path"), req("user"), req("group")), chown(true))
	reg("user_to_uid", "Convert a user name to a uid.", sig(req("user")), userToUID)
	reg("group_to_gid", "Convert a group name to a gid.", sig(req("group")), groupToGID)
	reg("read", "Return the content of a file.", sig(req("path"), opt("binary", false)), read)
	reg("write", "Write lines to a file, replacing it.", modules.Spec{Params: []modules.Param{req("path")}, VarArgs: true, VarKw: true}, write)
	reg("append", "Append lines to a file.", modules.Spec{Params: []modules.Param{req("path")}, VarArgs: true, VarKw: true}, appendFn)
	reg("prepend", "Prepend lines to a file.", modules.Spec{Params: []modules.Param{req("path")}, VarArgs: true, VarKw: true}, prependFn)
	reg("touch", "Create a file or update its times.", sig(req("name"), opt("atime", nil), opt("mtime", nil)), touchFn)
	reg("remove", "Remove a file or directory tree.", modules.Spec{Params: []modules.Param{req("path")}, VarKw: true}, remove)
	reg("mkdir", "Create a directory and its parents.", sig(req("dir_path"), opt("user", nil), opt("group", nil), opt("mode", nil)), mkdirFn)
	reg("makedirs", "Create the parent directories of path.", sig(req("path"), opt("user", nil), opt("group", nil), opt("mode", nil)), makedirsFn)
	reg("copy", "Copy a file or directory.", sig(req("src"), req("dst"), opt("recurse", false), opt("remove_existing", false)), copyFn)
	reg("rename", "Rename a file or directory.", sig(req("src"), req("dst")), rename)
	reg("move", "Move a file or directory.", sig(req("src"), req("dst"), opt("disallow_copy_and_unlink", false)), move)
	reg("symlink", "Create a symbolic link.", sig(req("src"), req("path"), opt("force", false), opt("atomic", false)), symlinkFn)
	reg("is_link", "Return True if path is a symlink.", sig(req("path")), isLink)
	reg("readlink", "Return the target of a symlink.", sig(req("path"), opt("canonicalize", false)), readlink)
	reg("contains", "Return True if the file contains text.", sig(req("path"), req("text")), contains)
	reg("contains_regex", "Return True if a line of the file matches regex.", sig(req("path"), req("regex"), opt("lchar", "")), containsRegex)
	reg("search", "Return True if pattern matches the file.", sig(req("path"), req("pattern"), opt("flags", 8), opt("bufsize", 1), opt("ignore_if_missing", false), opt("multiline", false)), search)
	reg("replace", "Replace occurrences of a pattern in a file.", replaceSpec, replaceFn)
	reg("line", "Edit a line in a file.", lineSpec, lineFn)
	reg("comment_line", "Comment or uncomment the lines matching regex.", sig(req("path"), req("regex"), opt("char", "#"), opt("cmnt", true), opt("backup", ".bak")), commentLineFn)
	reg("comment", "Comment out the lines matching regex.", sig(req("path"), req("regex"), opt("char", "#"), opt("backup", ".bak")), commentFn(true))
	reg("uncomment", "Uncomment the lines matching regex.", sig(req("path"), req("regex"), opt("char", "#"), opt("backup", ".bak")), commentFn(false))
	reg("blockreplace", "Replace the block between two marker lines.", blockSpec, blockFn)
	reg("get_diff", "Return the unified diff of two files.", sig(req("file1"), req("file2"), opt("saltenv", "base"), opt("show_filenames", true), opt("show_changes", true), opt("template", false), opt("source_hash_file1", nil), opt("source_hash_file2", nil)), getDiff)
	reg("find", "Find files like GNU find.", modules.Spec{Params: []modules.Param{req("path")}, VarArgs: true, VarKw: true}, find)
	reg("access", "Test access to a path.", sig(req("path"), req("mode")), access)
	reg("check_perms", "Check and set the permissions of a file.", sig(req("name"), req("ret"), req("user"), req("group"), req("mode"), opt("attrs", nil), opt("follow_symlinks", false)), checkPermsFn)
	reg("source_list", "Return the first existing source and its hash.", sig(req("source"), req("source_hash"), req("saltenv")), sourceListFn)
	registerFSOps(reg)
	reg("normpath", "Return os.path.normpath of path.", sig(req("path")), func(_ context.Context, c *modules.Call) (any, error) {
		return filepath.Clean(c.Str("path")), nil
	})
	reg("basename", "Return os.path.basename of path.", sig(req("path")), func(_ context.Context, c *modules.Call) (any, error) {
		return pyBasename(c.Str("path")), nil
	})
	reg("dirname", "Return os.path.dirname of path.", sig(req("path")), func(_ context.Context, c *modules.Call) (any, error) {
		return pyDirname(c.Str("path")), nil
	})
}

var replaceSpec = sig(req("path"), req("pattern"), req("repl"), opt("count", 0), opt("flags", 8),
	opt("bufsize", 1), opt("append_if_not_found", false), opt("prepend_if_not_found", false),
	opt("not_found_content", nil), opt("backup", ".bak"), opt("dry_run", false), opt("search_only", false),
	opt("show_changes", true), opt("ignore_if_missing", false), opt("preserve_inode", true),
	opt("backslash_literal", false))

var lineSpec = sig(req("path"), opt("content", nil), opt("match", nil), opt("mode", nil),
	opt("location", nil), opt("before", nil), opt("after", nil), opt("show_changes", true),
	opt("backup", false), opt("quiet", false), opt("indent", true))

var blockSpec = sig(req("path"), opt("marker_start", "#-- start managed zone --"),
	opt("marker_end", "#-- end managed zone --"), opt("content", ""), opt("append_if_not_found", false),
	opt("prepend_if_not_found", false), opt("backup", ".bak"), opt("dry_run", false), opt("show_changes", true),
	opt("append_newline", false), opt("insert_before_match", nil), opt("insert_after_match", nil))

// BlockOptsFrom reads blockreplace's arguments; get returns an argument.
func BlockOptsFrom(get func(string) any) BlockOpts {
	o := BlockOpts{MarkerStart: py.Str(get("marker_start")), MarkerEnd: py.Str(get("marker_end")),
		Content: py.Str(get("content")), AppendIfNotFound: modules.Truthy(get("append_if_not_found")),
		PrependIfNotFound: modules.Truthy(get("prepend_if_not_found")), ShowChanges: modules.Truthy(get("show_changes"))}
	if get("content") == nil {
		o.Content = ""
	}
	if b := get("backup"); b != false && b != nil {
		o.Backup = py.Str(b)
	}
	if v := get("append_newline"); v != nil {
		b := modules.Truthy(v)
		o.AppendNewline = &b
	}
	if v := get("insert_before_match"); v != nil {
		o.InsertBeforeMatch = py.Str(v)
	}
	if v := get("insert_after_match"); v != nil {
		o.InsertAfterMatch = py.Str(v)
	}
	return o
}

func backupSuffix(v any) string {
	switch v.(type) {
	case nil, bool:
		return ""
	}
	return py.Str(v)
}

func commentLineFn(_ context.Context, c *modules.Call) (any, error) {
	return CommentLine(c.Str("path"), c.Str("regex"), c.Str("char"), c.Bool("cmnt"), backupSuffix(c.Arg("backup")))
}

func commentFn(cmnt bool) modules.Func {
	return func(_ context.Context, c *modules.Call) (any, error) {
		return CommentLine(c.Str("path"), c.Str("regex"), c.Str("char"), cmnt, backupSuffix(c.Arg("backup")))
	}
}

func blockFn(_ context.Context, c *modules.Call) (any, error) {
	o := BlockOptsFrom(c.Arg)
	o.DryRun = c.Bool("dry_run")
	return BlockReplace(c.Str("path"), o)
}

func pyBasename(p string) string { return p[strings.LastIndexByte(p, '/')+1:] }

func pyDirname(p string) string {
	i := strings.LastIndexByte(p, '/') + 1
	head := p[:i]
	if trimmed := strings.TrimRight(head, "/"); trimmed != "" {
		return trimmed
	}
	return head
}

func fileExists(_ context.Context, c *modules.Call) (any, error) {
	st, err := os.Stat(expandUser(c.Str("path")))
	return err == nil && st.Mode().IsRegular(), nil
}

func directoryExists(_ context.Context, c *modules.Call) (any, error) {
	st, err := os.Stat(expandUser(c.Str("path")))
	return err == nil && st.IsDir(), nil
}

func getHash(_ context.Context, c *modules.Call) (any, error) {
	p := expandUser(c.Str("path"))
	if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
		return nil, nil
	}
	return GetHash(p, c.Str("form"))
}

// checkHash is file.check_hash: file_hash is "<type>:<hex>" or a bare
// hex digest whose length tells the type.
func checkHash(_ context.Context, c *modules.Call) (any, error) {
	h := c.Str("file_hash")
	form, sum, ok := strings.Cut(h, ":")
	if !ok {
		sum = h
		form = map[int]string{32: "md5", 40: "sha1", 56: "sha224", 64: "sha256", 96: "sha384", 128: "sha512"}[len(h)]
		if form == "" {
			return nil, modules.Invalidf("Hash %s (length: %d) could not be matched to a supported hash type. The supported hash types and lengths are: sha1 (40), sha224 (56), sha256 (64), sha384 (96), sha512 (128), md5 (32)", h, len(h))
		}
	}
	got, err := GetHash(expandUser(c.Str("path")), form)
	if err != nil {
		return nil, err
	}
	return got == strings.ToLower(sum), nil
}

func stats(_ context.Context, c *modules.Call) (any, error) {
	ht, _ := c.Arg("hash_type").(string)
	st, err := Stats(expandUser(c.Str("path")), ht, c.Bool("follow_symlinks"))
	if err != nil {
		return nil, err
	}
	return st.Map(), nil
}

func statField(field string) modules.Func {
	return func(_ context.Context, c *modules.Call) (any, error) {
		st, err := Stats(expandUser(c.Str("path")), "", c.Bool("follow_symlinks"))
		if err != nil {
			return nil, err
		}
		return st.Map().Value(field), nil
	}
}

func lstat(_ context.Context, c *modules.Call) (any, error) {
	p := expandUser(c.Str("path"))
	if !filepath.IsAbs(p) {
		return nil, modules.Invalidf("Path to file must be absolute.")
	}
	st, _, err := statFollow(p, false)
	if err != nil {
		return ordered.New(), nil
	}
	return ordered.FromPairs("st_atime", st.Atime, "st_ctime", st.Ctime,
		"st_gid", st.GID, "st_mode", int(st.Mode), "st_mtime", st.Mtime,
		"st_nlink", st.Nlink, "st_size", int(st.Size), "st_uid", st.UID), nil
}

func setMode(_ context.Context, c *modules.Call) (any, error) {
	return SetMode(expandUser(c.Str("path")), c.Str("mode"))
}

func chown(link bool) modules.Func {
	return func(_ context.Context, c *modules.Call) (any, error) {
		msg, err := Chown(expandUser(c.Str("path")), c.Arg("user"), c.Arg("group"), link)
		if err != nil {
			return nil, modules.Errorf("%s", err.Error())
		}
		if msg != "" {
			return msg, nil
		}
		return nil, nil
	}
}

func userToUID(_ context.Context, c *modules.Call) (any, error) {
	if n, ok := UserToUID(c.Arg("user")); ok {
		return n, nil
	}
	return "", nil
}

func groupToGID(_ context.Context, c *modules.Call) (any, error) {
	if c.Arg("group") == nil {
		return "", nil
	}
	if n, ok := GroupToGID(c.Arg("group")); ok {
		return n, nil
	}
	return "", nil
}

func read(_ context.Context, c *modules.Call) (any, error) {
	b, err := os.ReadFile(expandUser(c.Str("path")))
	if err != nil {
		return nil, modules.Errorf("%s", pyOSError(err))
	}
	if c.Arg("binary") == true {
		return string(b), nil
	}
	return universalNewlines(string(b)), nil
}

// PyOSError words an os error as Python's OSError str(), for modules
// that return Salt's error text.
func PyOSError(err error) string { return pyOSError(err) }

// pyOSError words an os error as Python's OSError str().
func pyOSError(err error) string {
	var pe *os.PathError
	if e, ok := err.(*os.PathError); ok {
		pe = e
		if errno, ok := pe.Err.(syscall.Errno); ok {
			msg := errno.Error()
			return fmt.Sprintf("[Errno %d] %s: '%s'", int(errno), strings.ToUpper(msg[:1])+msg[1:], pe.Path)
		}
	}
	return err.Error()
}

// lineArgs is the *args (or args= keyword) of write, append and prepend.
func lineArgs(c *modules.Call) []string {
	if v, ok := c.Kwargs.Get("args"); ok {
		return strList(v)
	}
	out := make([]string, len(c.VarArgs))
	for i, a := range c.VarArgs {
		out[i] = py.Str(a)
	}
	return out
}

func write(_ context.Context, c *modules.Call) (any, error) {
	p := expandUser(c.Str("path"))
	lines := lineArgs(c)
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l + "\n")
	}
	if err := writeOrCreate(p, []byte(b.String())); err != nil {
		return nil, err
	}
	return fmt.Sprintf("Wrote %d lines to \"%s\"", len(lines), p), nil
}

func appendFn(_ context.Context, c *modules.Call) (any, error) {
	return AppendLines(c.Str("path"), lineArgs(c))
}

func prependFn(_ context.Context, c *modules.Call) (any, error) {
	return PrependLines(c.Str("path"), lineArgs(c))
}

func touchFn(_ context.Context, c *modules.Call) (any, error) {
	if err := Touch(c.Str("name"), c.Arg("atime"), c.Arg("mtime")); err != nil {
		return nil, err
	}
	return true, nil
}

func remove(_ context.Context, c *modules.Call) (any, error) {
	p := expandUser(c.Str("path"))
	if !filepath.IsAbs(p) {
		return nil, modules.Invalidf("File path must be absolute: %s", p)
	}
	if _, err := os.Lstat(p); err != nil {
		return false, nil
	}
	if err := os.RemoveAll(p); err != nil {
		return nil, modules.Errorf("Could not remove '%s': %s", p, pyOSError(err))
	}
	return true, nil
}

func mkdirFn(_ context.Context, c *modules.Call) (any, error) {
	if err := Mkdir(c.Str("dir_path"), c.Arg("user"), c.Arg("group"), c.Arg("mode"), c.Env.Test); err != nil {
		return nil, err
	}
	return true, nil
}

func makedirsFn(_ context.Context, c *modules.Call) (any, error) {
	msg, err := Makedirs(c.Str("path"), c.Arg("user"), c.Arg("group"), c.Arg("mode"), c.Env.Test)
	if err != nil {
		return nil, err
	}
	if msg != "" {
		return msg, nil
	}
	return nil, nil
}

func copyFn(_ context.Context, c *modules.Call) (any, error) {
	src, dst := expandUser(c.Str("src")), expandUser(c.Str("dst"))
	if !filepath.IsAbs(src) {
		return nil, modules.Invalidf("File path must be absolute.")
	}
	st, err := Stats(src, "", true)
	if err != nil {
		return nil, modules.Errorf("No such file or directory '%s'", src)
	}
	dstIsDir := false
	if d, err := os.Stat(dst); err == nil && d.IsDir() {
		dstIsDir = true
	}
	if dstIsDir || st.Type == "dir" {
		if !c.Bool("recurse") {
			return nil, modules.Invalidf("Cannot copy overwriting a directory without recurse flag set to true!")
		}
		if c.Bool("remove_existing") {
			_ = os.RemoveAll(dst)
		}
		if err := copyTree(src, dst); err != nil {
			return nil, modules.Errorf("Could not copy '%s' to '%s'", src, dst)
		}
	} else {
		b, err := os.ReadFile(src)
		if err == nil {
			err = os.WriteFile(dst, b, 0o644)
		}
		if err != nil {
			return nil, modules.Errorf("Could not copy '%s' to '%s'", src, dst)
		}
	}
	if _, _, err := CheckPerms(dst, nil, st.User, st.Group, st.Mode, false, false); err != nil {
		return nil, err
	}
	return true, nil
}

// copyTree is salt.utils.files.recursive_copy: merge src into dst.
func copyTree(src, dst string) error {
	return filepath.Walk(src, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		out := filepath.Join(dst, rel)
		if fi.IsDir() {
			return os.MkdirAll(out, fi.Mode().Perm())
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(out, b, fi.Mode().Perm())
	})
}

func rename(_ context.Context, c *modules.Call) (any, error) {
	src, dst := expandUser(c.Str("src")), expandUser(c.Str("dst"))
	if !filepath.IsAbs(src) {
		return nil, modules.Invalidf("File path must be absolute.")
	}
	if err := os.Rename(src, dst); err != nil {
		return nil, modules.Errorf("Could not rename '%s' to '%s'", src, dst)
	}
	return true, nil
}

func move(_ context.Context, c *modules.Call) (any, error) {
	src, dst := expandUser(c.Str("src")), expandUser(c.Str("dst"))
	if !filepath.IsAbs(src) {
		return nil, modules.Invalidf("Source path must be absolute.")
	}
	if !filepath.IsAbs(dst) {
		return nil, modules.Invalidf("Destination path must be absolute.")
	}
	if err := os.Rename(src, dst); err != nil {
		return nil, modules.Errorf("Unable to move '%s' to '%s': %s", src, dst, pyOSError(err))
	}
	return ordered.FromPairs("result", true, "comment", fmt.Sprintf("'%s' moved to '%s'", src, dst)), nil
}

func symlinkFn(_ context.Context, c *modules.Call) (any, error) {
	if err := Symlink(c.Str("src"), c.Str("path"), c.Bool("force"), c.Bool("atomic")); err != nil {
		return nil, err
	}
	return true, nil
}

func isLink(_ context.Context, c *modules.Call) (any, error) {
	fi, err := os.Lstat(expandUser(c.Str("path")))
	return err == nil && fi.Mode()&os.ModeSymlink != 0, nil
}

func readlink(_ context.Context, c *modules.Call) (any, error) {
	p := os.ExpandEnv(expandUser(c.Str("path")))
	if !filepath.IsAbs(p) {
		return nil, modules.Invalidf("Path to link must be absolute: %s", p)
	}
	fi, err := os.Lstat(p)
	if err != nil || fi.Mode()&os.ModeSymlink == 0 {
		return nil, modules.Invalidf("A valid link was not specified: %s", p)
	}
	if c.Bool("canonicalize") {
		return realPath(p), nil
	}
	t, err := os.Readlink(p)
	if err != nil {
		return nil, modules.Errorf("%s", err.Error())
	}
	return t, nil
}

func contains(_ context.Context, c *modules.Call) (any, error) {
	b, err := os.ReadFile(expandUser(c.Str("path")))
	if err != nil {
		return false, nil
	}
	return strings.Contains(string(b), strings.TrimSpace(py.Str(c.Arg("text")))), nil
}

func containsRegex(_ context.Context, c *modules.Call) (any, error) {
	b, err := os.ReadFile(expandUser(c.Str("path")))
	if err != nil {
		return false, nil
	}
	re, err := CompilePy(c.Str("regex"), 0)
	if err != nil {
		return nil, modules.Errorf("%s", err.Error())
	}
	lchar := c.Str("lchar")
	for _, l := range ReadLines(universalNewlines(string(b))) {
		if lchar != "" {
			l = strings.TrimLeft(l, lchar)
		}
		if re.MatchString(l) {
			return true, nil
		}
	}
	return false, nil
}

func search(_ context.Context, c *modules.Call) (any, error) {
	flags, err := ParseFlags(c.Arg("flags"))
	if err != nil {
		return nil, err
	}
	return Search(c.Str("path"), c.Str("pattern"), flags, c.Bool("multiline"), c.Bool("ignore_if_missing"))
}

func replaceFn(_ context.Context, c *modules.Call) (any, error) {
	flags, err := ParseFlags(c.Arg("flags"))
	if err != nil {
		return nil, err
	}
	count, _ := c.Arg("count").(int)
	o := ReplaceOpts{Pattern: c.Str("pattern"), Repl: py.Str(c.Arg("repl")), Count: count, Flags: flags,
		AppendIfNotFound: c.Bool("append_if_not_found"), PrependIfNotFound: c.Bool("prepend_if_not_found"),
		DryRun: c.Bool("dry_run"), SearchOnly: c.Bool("search_only"), ShowChanges: c.Bool("show_changes"),
		IgnoreIfMissing: c.Bool("ignore_if_missing"), BackslashLiteral: c.Bool("backslash_literal")}
	if v := c.Arg("not_found_content"); v != nil {
		s := py.Str(v)
		o.NotFoundContent = &s
	}
	if b := c.Arg("backup"); modules.Truthy(b) {
		o.Backup = py.Str(b)
	}
	return Replace(c.Str("path"), o)
}

func optStr(c *modules.Call, name string) *string {
	if v := c.Arg(name); v != nil {
		s := py.Str(v)
		return &s
	}
	return nil
}

func lineFn(_ context.Context, c *modules.Call) (any, error) {
	o := LineOpts{Content: optStr(c, "content"), Match: optStr(c, "match"), Location: optStr(c, "location"),
		Before: optStr(c, "before"), After: optStr(c, "after"), Mode: c.Str("mode"),
		ShowChanges: c.Bool("show_changes"), Backup: c.Bool("backup"), Quiet: c.Bool("quiet"),
		Indent: c.Bool("indent"), Test: c.Env.Test}
	return Line(c.Str("path"), o)
}

// getDiff is file.get_diff over local paths or salt:// URLs.
func getDiff(ctx context.Context, c *modules.Call) (any, error) {
	var data [2][]byte
	var errs []any
	for i, arg := range []string{"file1", "file2"} {
		f := c.Str(arg)
		b, comment, err := FetchSource(ctx, c.Env, f, c.Str("saltenv"))
		if err != nil || comment != "" {
			errs = append(errs, fmt.Sprintf("File %s not found", f))
			continue
		}
		data[i] = b
	}
	if len(errs) > 0 {
		return nil, modules.Errorf("Failed to cache one or more files")
	}
	if string(data[0]) == string(data[1]) {
		return "", nil
	}
	if !c.Bool("show_changes") {
		return "<show_changes=False>", nil
	}
	if msg := binaryReplace(data[0], data[1]); msg != "" {
		return msg, nil
	}
	a, b := ReadLines(string(data[0])), ReadLines(string(data[1]))
	lines := UnifiedDiff(a, b, "\n")
	if c.Bool("show_filenames") && len(lines) >= 2 {
		lines[0] = "--- " + c.Str("file1") + "\n"
		lines[1] = "+++ " + c.Str("file2") + "\n"
	}
	return strings.Join(lines, ""), nil
}

func access(_ context.Context, c *modules.Call) (any, error) {
	p := expandUser(c.Str("path"))
	if !filepath.IsAbs(p) {
		return nil, modules.Invalidf("Path to link must be absolute.")
	}
	modes := map[string]uint32{"f": 0, "r": 4, "w": 2, "x": 1}
	m, ok := modes[c.Str("mode")]
	if !ok {
		return nil, modules.Invalidf("Invalid mode specified.")
	}
	return osAccess(p, m), nil
}

func checkPermsFn(_ context.Context, c *modules.Call) (any, error) {
	ret := NewRet(c.Str("name"))
	if m, ok := c.Arg("ret").(*ordered.Map); ok {
		ret.Comment, _ = m.Value("comment").(string)
		if ch, ok := m.Value("changes").(*ordered.Map); ok {
			ret.Changes = ch
		}
	}
	ret, perms, err := CheckPerms(expandUser(c.Str("name")), ret, c.Arg("user"), c.Arg("group"), c.Arg("mode"), c.Bool("follow_symlinks"), c.Env.Test)
	if err != nil {
		return nil, err
	}
	pm := ordered.FromPairs("luser", perms.LUser, "lgroup", perms.LGroup, "lmode", perms.LMode)
	return []any{ret.Map(), pm}, nil
}

func sourceListFn(ctx context.Context, c *modules.Call) (any, error) {
	src, hash, err := SourceList(ctx, c.Env, c.Arg("source"), c.Str("source_hash"), c.Str("saltenv"))
	if err != nil {
		return nil, err
	}
	return []any{src, hash}, nil
}
