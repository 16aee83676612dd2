package file

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/state/modules"
)

// RmdirResult is file.rmdir's verbose return.
type RmdirResult struct {
	Deleted []string
	Errors  [][2]string
	Result  bool
}

// Rmdir is file.rmdir: remove path if empty; with recurse, first the
// empty directories below it, deepest first. olderThan (days, 0 for
// none) keeps directories modified more recently.
func Rmdir(path string, recurse bool, olderThan int) (*RmdirResult, error) {
	path = expandUser(path)
	if !filepath.IsAbs(path) {
		return nil, modules.Invalidf("File path must be absolute.")
	}
	if st, err := os.Stat(path); err != nil || !st.IsDir() {
		return nil, modules.Invalidf("A valid directory was not specified.")
	}
	cutoff := time.Time{}
	if olderThan > 0 {
		cutoff = time.Now().Add(-time.Duration(olderThan) * 24 * time.Hour)
	}
	old := func(p string) bool {
		if cutoff.IsZero() {
			return true
		}
		st, err := os.Stat(p)
		return err == nil && st.ModTime().Before(cutoff)
	}
	res := &RmdirResult{}
	remove := func(p string) bool {
		if err := os.Remove(p); err != nil {
			res.Errors = append(res.Errors, [2]string{p, pyOSError(err)})
			return false
		}
		res.Deleted = append(res.Deleted, p)
		return true
	}
	if recurse {
		var dirs []string
		_ = filepath.WalkDir(path, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() && p != path {
				dirs = append(dirs, p)
			}
			return nil
		})
		// deepest first, as os.walk(topdown=False)
		sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
		for _, d := range dirs {
			if old(d) {
				remove(d)
			}
		}
		res.Result = len(res.Errors) == 0
	}
	if old(path) {
		ok := remove(path)
		res.Result = ok && (res.Result || !recurse)
	}
	return res, nil
}

// Map is the verbose dict.
func (r *RmdirResult) Map() *ordered.Map {
	del := make([]any, len(r.Deleted))
	for i, d := range r.Deleted {
		del[i] = d
	}
	errs := make([]any, len(r.Errors))
	for i, e := range r.Errors {
		errs[i] = []any{e[0], e[1]}
	}
	return ordered.FromPairs("deleted", del, "errors", errs, "result", r.Result)
}

func rmdirFn(_ context.Context, c *modules.Call) (any, error) {
	days := 0
	if v := c.Arg("older_than"); v != nil {
		n, err := strconv.Atoi(py.Str(v))
		if err != nil {
			return nil, modules.Errorf("invalid older_than %s", py.Str(v))
		}
		days = n
	}
	r, err := Rmdir(c.Str("path"), c.Bool("recurse"), days)
	if err != nil {
		return nil, err
	}
	if c.Bool("verbose") {
		return r.Map(), nil
	}
	return r.Result, nil
}
