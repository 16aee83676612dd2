package file

import (
	"context"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/state/modules"
)

// findOpts are the criteria of file.find Brine supports: name, iname,
// regex, iregex, type, maxdepth and mindepth (salt/utils/find.py).
type findOpts struct {
	name, iname        string
	re                 *regexp.Regexp
	types              string
	minDepth, maxDepth int
}

// find is file.find with the common criteria; it returns the matching
// paths, the default "print: path" action.
func find(_ context.Context, c *modules.Call) (any, error) {
	o := findOpts{maxDepth: -1}
	var err error
	c.Kwargs.Range(func(k, v any) bool {
		err = o.set(ordered.KeyString(k), py.Str(v))
		return err == nil
	})
	if err != nil {
		return nil, err
	}
	root := expandUser(c.Str("path"))
	if !filepath.IsAbs(root) {
		return nil, modules.Invalidf("The path must be absolute")
	}
	var out []any
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, werr error) error {
		if werr != nil {
			return nil
		}
		depth := 0
		if rel, _ := filepath.Rel(root, p); rel != "." {
			depth = strings.Count(rel, "/") + 1
		}
		if o.maxDepth >= 0 && depth > o.maxDepth {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if depth >= o.minDepth && o.match(p, d) {
			out = append(out, p)
		}
		return nil
	})
	if out == nil {
		out = []any{}
	}
	return out, nil
}

func (o *findOpts) set(key, val string) error {
	var err error
	switch key {
	case "name":
		o.name = val
	case "iname":
		o.iname = strings.ToLower(val)
	case "regex", "iregex":
		flags := 0
		if key == "iregex" {
			flags = reIgnoreCase
		}
		o.re, err = CompilePy(val, flags)
	case "type":
		o.types = strings.ReplaceAll(val, " ", "")
	case "maxdepth":
		o.maxDepth, err = strconv.Atoi(val)
	case "mindepth":
		o.minDepth, err = strconv.Atoi(val)
	case "print":
		if val != "path" {
			return modules.Invalidf("invalid print option: %s", val)
		}
	default:
		return modules.Invalidf("invalid option: %s", key)
	}
	if err != nil {
		return modules.Invalidf("invalid value for %s: %s", key, val)
	}
	return nil
}

func (o *findOpts) match(p string, d fs.DirEntry) bool {
	base := filepath.Base(p)
	if o.name != "" {
		if ok, _ := filepath.Match(o.name, base); !ok {
			return false
		}
	}
	if o.iname != "" {
		if ok, _ := filepath.Match(o.iname, strings.ToLower(base)); !ok {
			return false
		}
	}
	if o.re != nil && !o.re.MatchString(base) {
		return false
	}
	if o.types != "" {
		t := d.Type()
		kind := "f"
		switch {
		case t.IsDir():
			kind = "d"
		case t&fs.ModeSymlink != 0:
			kind = "l"
		case t&fs.ModeNamedPipe != 0:
			kind = "p"
		case t&fs.ModeSocket != 0:
			kind = "s"
		case t&fs.ModeCharDevice != 0:
			kind = "c"
		case t&fs.ModeDevice != 0:
			kind = "b"
		}
		if !strings.Contains(o.types, kind) {
			return false
		}
	}
	return true
}
