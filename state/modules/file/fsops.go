package file

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/state/modules"
)

// registerFSOps adds the small path and inode helpers.
func registerFSOps(reg func(name, doc string, s modules.Spec, fn modules.Func)) {
	registerManaged(reg)
	registerBackups(reg)
	reg("readdir", "List a directory with . and ..", sig(req("path")), readdir)
	reg("chgrp", "Change a file's group.", sig(req("path"), req("group")), chgrp)
	reg("link", "Create a hard link.", sig(req("src"), req("path")), link)
	reg("is_hardlink", "Return True if path has more than one link.", sig(req("path")), isHardlink)
	reg("truncate", "Truncate a file to length bytes.", sig(req("path"), req("length")), truncate)
	reg("path_exists_glob", "Return True if the glob matches a path.", sig(req("path")), pathExistsGlob)
	reg("join", "Return os.path.join of the arguments.", modules.Spec{VarArgs: true}, join)
	reg("pardir", "Return os.path.pardir.", sig(), func(context.Context, *modules.Call) (any, error) { return "..", nil })
	reg("diskusage", "Return the bytes used under path.", sig(req("path")), diskusage)
	reg("seek_read", "Read size bytes at offset.", sig(req("path"), req("size"), req("offset")), seekRead)
	reg("sed", "Edit a file in place with sed.", sig(req("path"), req("before"), req("after"), opt("limit", ""),
		opt("backup", ".bak"), opt("options", "-r -e"), opt("flags", "g"), opt("escape_all", false),
		opt("negate_match", false)), sed)
	reg("sed_contains", "Return True if sed finds text in the file.", sig(req("path"), req("text"), opt("limit", ""), opt("flags", "g")), sedContains)
	reg("rmdir", "Remove an empty directory (and, with recurse, the empty ones below).",
		sig(req("path"), opt("recurse", false), opt("verbose", false), opt("older_than", nil)), rmdirFn)
	reg("statvfs", "Return os.statvfs of path.", sig(req("path")), statvfs)
}

func readdir(_ context.Context, c *modules.Call) (any, error) {
	p := expandUser(c.Str("path"))
	if !filepath.IsAbs(p) {
		return nil, modules.Invalidf("Dir path must be absolute.")
	}
	ents, err := os.ReadDir(p)
	if err != nil {
		return nil, modules.Invalidf("A valid directory was not specified.")
	}
	out := []any{".", ".."}
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out, nil
}

func chgrp(_ context.Context, c *modules.Call) (any, error) {
	p := expandUser(c.Str("path"))
	st, err := Stats(p, "", true)
	if err != nil {
		return nil, err
	}
	msg, err := Chown(p, st.User, c.Arg("group"), false)
	if err != nil {
		return nil, modules.Errorf("%s", err.Error())
	}
	if msg != "" {
		return msg, nil
	}
	return nil, nil
}

func link(_ context.Context, c *modules.Call) (any, error) {
	src := expandUser(c.Str("src"))
	if !filepath.IsAbs(src) {
		return nil, modules.Invalidf("File path must be absolute.")
	}
	if err := os.Link(src, c.Str("path")); err != nil {
		return nil, modules.Errorf("Could not create '%s': %s", c.Str("path"), pyOSError(err))
	}
	return true, nil
}

func isHardlink(_ context.Context, c *modules.Call) (any, error) {
	st, _, err := statFollow(expandUser(c.Str("path")), false)
	if err != nil {
		return ordered.New(), nil
	}
	return st.Nlink > 1, nil
}

func truncate(_ context.Context, c *modules.Call) (any, error) {
	n, err := strconv.ParseInt(py.Str(c.Arg("length")), 10, 64)
	if err != nil {
		return nil, modules.Errorf("invalid literal for int() with base 10: '%s'", py.Str(c.Arg("length")))
	}
	if err := os.Truncate(expandUser(c.Str("path")), n); err != nil {
		return nil, modules.Errorf("%s", pyOSError(err))
	}
	return nil, nil
}

func pathExistsGlob(_ context.Context, c *modules.Call) (any, error) {
	m, _ := filepath.Glob(expandUser(c.Str("path")))
	return len(m) > 0, nil
}

// join is os.path.join: an absolute part restarts the path.
func join(_ context.Context, c *modules.Call) (any, error) {
	out := ""
	for _, a := range c.VarArgs {
		s := py.Str(a)
		switch {
		case strings.HasPrefix(s, "/") || out == "":
			out = s
		case strings.HasSuffix(out, "/"):
			out += s
		default:
			out += "/" + s
		}
	}
	return out, nil
}

func diskusage(_ context.Context, c *modules.Call) (any, error) {
	p := c.Str("path")
	if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
		return int(st.Size()), nil
	}
	seen := map[uint64]bool{}
	total := int64(0)
	_ = filepath.WalkDir(p, func(fp string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		st, _, err := statFollow(fp, true)
		if err != nil || (st.Ino != 0 && seen[st.Ino]) {
			return nil
		}
		seen[st.Ino] = true
		total += st.Size
		return nil
	})
	return int(total), nil
}

func seekRead(_ context.Context, c *modules.Call) (any, error) {
	size, err1 := strconv.Atoi(py.Str(c.Arg("size")))
	off, err2 := strconv.ParseInt(py.Str(c.Arg("offset")), 10, 64)
	if err1 != nil || err2 != nil {
		return nil, modules.Errorf("size and offset must be integers")
	}
	f, err := os.Open(expandUser(c.Str("path")))
	if err != nil {
		return nil, modules.Errorf("%s", pyOSError(err))
	}
	defer f.Close()
	buf := make([]byte, size)
	n, _ := f.ReadAt(buf, off)
	return string(buf[:n]), nil
}

func statvfs(_ context.Context, c *modules.Call) (any, error) {
	p := expandUser(c.Str("path"))
	if !filepath.IsAbs(p) {
		return nil, modules.Invalidf("File path must be absolute.")
	}
	m, err := statvfsPath(p)
	if err != nil {
		return nil, modules.Errorf("Could not statvfs '%s'", p)
	}
	return m, nil
}

func readFileBytes(p string) ([]byte, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, modules.Errorf("%s", pyOSError(err))
	}
	return b, nil
}
