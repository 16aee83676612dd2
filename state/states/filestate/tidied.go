package filestate

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/state/modules/file"
	"github.com/brinesalt/brine/state/states"
)

var tidiedSpec = spec(true, opt("age", 0), opt("matches", nil), opt("rmdirs", false), opt("size", 0),
	opt("exclude", nil), opt("full_path_match", false), opt("followlinks", false),
	opt("time_comparison", "atime"), opt("age_size_logical_operator", "OR"), opt("age_size_only", nil),
	opt("rmlinks", true))

var humanSizeRe = regexp.MustCompile(`^([0-9.]*)\s*(.*)$`)

// humanToBytes is salt.utils.stringutils.human_to_bytes with
// handle_metric: "10M" and "10MiB" are powers of 1024, "10MB" of 1000;
// anything unreadable is 0.
func humanToBytes(s string) int64 {
	m := humanSizeRe.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return 0
	}
	unit := strings.ToLower(m[2])
	if unit == "" {
		unit = "b"
	}
	p := strings.IndexByte("bkmgtpezy", unit[0])
	switch {
	case p > 0 && len(unit) == 2 && unit[1] == 'b':
		return int64(v * math.Pow(10, float64(p*3)))
	case unit == "b", p > 0 && (len(unit) == 1 || unit[1:] == "ib"):
		return int64(v * math.Pow(2, float64(p*10)))
	}
	return 0
}

type tidyOpts struct {
	age                 int
	size                int64
	matches, excludes   []*regexp.Regexp
	rmdirs, rmlinks     bool
	fullPath, follow    bool
	timeField, op, only string
}

// tidied is file.tidied: remove what under name is old or large enough
// and matches (files, and with rmdirs directories).
func tidied(_ context.Context, c *states.Call) (*states.Result, error) {
	name := expandUser(c.Str("name"))
	o, res := tidyOptions(c, name)
	if res != nil {
		return res, nil
	}
	todelete := o.walk(name)
	r := states.NewResult(name, states.True, "")
	if len(todelete) == 0 {
		r.Comment = fmt.Sprintf("Nothing to remove from directory %s", name)
		return r, nil
	}
	l := make([]any, 0, len(todelete))
	if c.Env.Test {
		for _, p := range todelete {
			l = append(l, p)
		}
		r.Result, r.Comment = states.None, fmt.Sprintf("%s is set for tidy", name)
		r.Changes.Set("removed", l)
		return r, nil
	}
	for _, p := range todelete {
		if err := os.RemoveAll(p); err != nil {
			return fail(name, fmt.Sprintf("Could not remove '%s': %s", p, err.Error())), nil
		}
		l = append(l, p)
	}
	r.Changes.Set("removed", l)
	r.Comment = fmt.Sprintf("Removed %d files or directories from directory %s", len(todelete), name)
	return r, nil
}

func tidyOptions(c *states.Call, name string) (*tidyOpts, *states.Result) {
	o := &tidyOpts{rmdirs: c.Bool("rmdirs"), rmlinks: c.Bool("rmlinks"), fullPath: c.Bool("full_path_match"),
		follow: c.Bool("followlinks"), op: strings.ToUpper(c.Str("age_size_logical_operator")),
		only: strings.ToLower(c.Str("age_size_only")), timeField: strings.ToLower(c.Str("time_comparison"))}
	o.age, _ = c.Arg("age").(int)
	switch v := c.Arg("size").(type) {
	case int:
		o.size = int64(v)
	case string:
		o.size = humanToBytes(v)
	}
	if o.op != "AND" {
		o.op = "OR"
	}
	if o.timeField != "ctime" && o.timeField != "mtime" {
		o.timeField = "atime"
	}
	if !filepath.IsAbs(name) {
		return nil, fail(name, fmt.Sprintf("Specified file %s is not an absolute path", name))
	}
	if !isDir(name) {
		return nil, fail(name, fmt.Sprintf("%s does not exist or is not a directory.", name))
	}
	matches := []any{".*"}
	if l, ok := c.Arg("matches").([]any); ok {
		matches = l
	}
	excludes, _ := c.Arg("exclude").([]any)
	for _, set := range []struct {
		src []any
		dst *[]*regexp.Regexp
	}{{matches, &o.matches}, {excludes, &o.excludes}} {
		for _, m := range set.src {
			re, err := file.CompilePy(`\A(?:`+py.Str(m)+`)`, 0)
			if err != nil {
				return nil, fail(name, err.Error())
			}
			*set.dst = append(*set.dst, re)
		}
	}
	return o, nil
}

func (o *tidyOpts) matchName(s string) bool {
	for _, m := range o.matches {
		if m.MatchString(s) {
			for _, x := range o.excludes {
				if x.MatchString(s) {
					return false
				}
			}
			return true
		}
	}
	return false
}

// walk lists what to delete, bottom-up as os.walk(topdown=False).
func (o *tidyOpts) walk(top string) []string {
	var out []string
	today := time.Now()
	var visit func(dir string)
	visit = func(dir string) {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		var files, dirs []string
		for _, e := range ents {
			p := filepath.Join(dir, e.Name())
			if e.IsDir() || (o.follow && isDir(p) && isLink(p)) {
				dirs = append(dirs, e.Name())
			} else {
				files = append(files, e.Name())
			}
		}
		for _, d := range dirs {
			if o.follow || !isLink(filepath.Join(dir, d)) {
				visit(filepath.Join(dir, d))
			}
		}
		for _, n := range append(files, dirs...) {
			if o.candidate(filepath.Join(dir, n), n, today) {
				out = append(out, filepath.Join(dir, n))
			}
		}
	}
	visit(top)
	return out
}

func (o *tidyOpts) candidate(p, elem string, today time.Time) bool {
	del := true
	size := int64(0)
	if isLink(p) {
		del = o.rmlinks
		if _, err := os.Lstat(p); err != nil {
			return false
		}
	} else {
		fi, err := os.Stat(p)
		if err != nil {
			return false
		}
		if fi.IsDir() {
			del = o.rmdirs
		} else {
			size = fi.Size()
		}
	}
	fs, err := file.Stats(p, "", !isLink(p))
	if err != nil {
		return false
	}
	ts := fs.Atime
	if o.timeField == "ctime" {
		ts = fs.Ctime
	} else if o.timeField == "mtime" {
		ts = fs.Mtime
	}
	days := int(math.Abs(dateOnly(today).Sub(dateOnly(time.Unix(int64(ts), 0))).Hours() / 24))
	var ok bool
	switch {
	case o.only == "age":
		ok = days >= o.age
	case o.only == "size":
		ok = size >= o.size
	case o.op == "AND":
		ok = size >= o.size && days >= o.age
	default:
		ok = size >= o.size || days >= o.age
	}
	name := elem
	if o.fullPath {
		name = p
	}
	return ok && o.matchName(name) && del
}

// dateOnly is date.fromtimestamp: the local calendar day.
func dateOnly(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}
