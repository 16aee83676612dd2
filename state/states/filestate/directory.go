package filestate

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/modules/file"
	"github.com/brinesalt/brine/state/states"
)

var directorySpec = spec(true,
	opt("user", nil), opt("group", nil), opt("recurse", nil), opt("max_depth", nil),
	opt("dir_mode", nil), opt("file_mode", nil), opt("makedirs", false), opt("clean", false),
	opt("require", nil), opt("exclude_pat", nil), opt("follow_symlinks", false), opt("force", false),
	opt("backupname", nil), opt("allow_symlink", true), opt("children_only", false),
	opt("win_owner", nil), opt("win_perms", nil), opt("win_deny_perms", nil),
	opt("win_inheritance", true), opt("win_perms_reset", false),
)

var recurseTypes = []string{"user", "group", "mode", "ignore_files", "ignore_dirs", "silent"}

// dirArgs is file.directory's arguments once normalized.
type dirArgs struct {
	name                        string
	user, group                 any
	dirMode, fileMode           any // normalized strings or nil
	recurse                     map[string]bool
	clean, follow, childrenOnly bool
	maxDepth                    int // -1 for no limit
	exclude                     string
	keep                        []string
}

// directory is file.directory.
func directory(ctx context.Context, c *states.Call) (*states.Result, error) {
	name := expandUser(c.Str("name"))
	if name == "" {
		return fail(name, "Must provide name to file.directory"), nil
	}
	if strings.HasSuffix(name, "/") && name != "/" {
		name = name[:len(name)-1]
	}
	if c.Arg("max_depth") != nil && c.Bool("clean") {
		return fail(name, "Cannot specify both max_depth and clean"), nil
	}
	a := &dirArgs{name: name, user: owner(c), group: c.Arg("group"), clean: c.Bool("clean"),
		follow: c.Bool("follow_symlinks"), childrenOnly: c.Bool("children_only"), maxDepth: -1}
	if d, ok := c.Arg("max_depth").(int); ok {
		a.maxDepth = d
	}
	dirMode := c.Arg("dir_mode")
	if m, ok := c.Kw("mode"); ok && !modules.Truthy(dirMode) {
		dirMode = m
	}
	fileMode := c.Arg("file_mode")
	if !modules.Truthy(fileMode) {
		fileMode = dirMode
	}
	a.dirMode, a.fileMode = normMode(dirMode), normMode(fileMode)
	if msg := checkUser(c, a.user, a.group); msg != "" {
		return fail(name, msg), nil
	}
	if !filepath.IsAbs(name) {
		return fail(name, fmt.Sprintf("Specified file %s is not an absolute path", name)), nil
	}
	if res := directoryReplace(c, name); res != nil {
		return res, nil
	}
	if rs, err := recurseSet(c.Arg("recurse")); err != nil {
		return fail(name, err.Error()), nil
	} else {
		a.recurse = rs
	}
	a.exclude = c.Str("exclude_pat")
	a.keep = keepFiles(c.Arg("require"))
	tresult, tcomment, tchanges := checkDirectory(a)
	r := states.NewResult(name, states.True, "")
	r.Changes = tchanges
	if c.Env.Test || tchanges.Len() == 0 {
		r.Result, r.Comment = tresult, tcomment
		return r, nil
	}
	return applyDirectory(c, a, r)
}

func normMode(v any) any {
	if m, ok := file.NormalizeMode(v); ok && modules.Truthy(v) {
		return m
	}
	return nil
}

// directoryReplace deals with a file or symlink where the directory
// should be (force, backupname, allow_symlink).
func directoryReplace(c *states.Call, name string) *states.Result {
	force := c.Bool("force")
	if !(isFile(name) || (!c.Bool("allow_symlink") && isLink(name)) || (force && isLink(name))) {
		return nil
	}
	r := states.NewResult(name, states.True, "")
	if b, ok := strArg(c, "backupname"); ok {
		if _, err := os.Lstat(b); err == nil {
			if !force {
				return fail(name, fmt.Sprintf("File exists where the backup target %s should go", b))
			}
			if c.Env.Test {
				r.Changes.Set("forced", fmt.Sprintf("Existing file at backup path %s would be removed", b))
			} else {
				_ = os.RemoveAll(b)
			}
		}
		if c.Env.Test {
			r.Changes.Set("backup", fmt.Sprintf("%s would be renamed to %s", name, b))
			r.Changes.Set(name, ordered.FromPairs("directory", "new"))
			r.Comment = fmt.Sprintf("%s would be backed up and replaced with a new directory", name)
			r.Result = states.None
			return r
		}
		if err := os.Rename(name, b); err != nil {
			return fail(name, err.Error())
		}
		return nil
	}
	if force {
		// Salt records "forced" and carries on; Brine removes and lets the
		// directory be created below.
		if !c.Env.Test {
			_ = os.RemoveAll(name)
		}
		return nil
	}
	if isFile(name) {
		return fail(name, fmt.Sprintf("Specified location %s exists and is a file", name))
	}
	return fail(name, fmt.Sprintf("Specified location %s exists and is a symlink", name))
}

// recurseSet is _get_recurse_set.
func recurseSet(v any) (map[string]bool, error) {
	if !modules.Truthy(v) {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf(`"recurse" must be formed as a list of strings`)
	}
	set := map[string]bool{}
	for _, x := range list {
		s, ok := x.(string)
		valid := false
		for _, t := range recurseTypes {
			valid = valid || (ok && s == t)
		}
		if !valid {
			quoted := make([]string, len(recurseTypes))
			for i, t := range recurseTypes {
				quoted[i] = `"` + t + `"`
			}
			//lint:ignore ST1005 Salt's exact message
			return nil, fmt.Errorf(`Types for "recurse" limited to %s.`, strings.Join(quoted, ", "))
		}
		set[s] = true
	}
	if set["ignore_files"] && set["ignore_dirs"] {
		//lint:ignore ST1005 Salt's exact message
		return nil, fmt.Errorf(`Must not specify "recurse" options "ignore_files" and "ignore_dirs" at the same time.`)
	}
	return set, nil
}

// keepFiles lists the paths named by `require: - file: <path>`, which
// clean must not remove. Salt resolves state IDs through __lowstate__;
// Brine keeps the names that are absolute paths.
func keepFiles(require any) []string {
	list, _ := require.([]any)
	var out []string
	for _, item := range list {
		m, ok := item.(*ordered.Map)
		if !ok {
			continue
		}
		if v, ok := m.Get("file"); ok {
			if p := ordered.KeyString(v); filepath.IsAbs(p) {
				out = append(out, filepath.Clean(p))
			}
		}
	}
	return out
}

type walkEntry struct {
	root        string
	dirs, files []string
}

// walk is _depth_limited_walk over os.walk (top-down, names sorted as
// listdir order is not stable; Salt's order is the file system's).
func walk(top string, maxDepth int) []walkEntry {
	var out []walkEntry
	var visit func(dir string, depth int)
	visit = func(dir string, depth int) {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		if maxDepth >= 0 && depth >= maxDepth {
			return
		}
		e := walkEntry{root: dir}
		for _, d := range ents {
			if d.IsDir() {
				e.dirs = append(e.dirs, d.Name())
			} else {
				e.files = append(e.files, d.Name())
			}
		}
		out = append(out, e)
		for _, d := range e.dirs {
			visit(filepath.Join(dir, d), depth+1)
		}
	}
	visit(top, 0)
	return out
}

// dirMeta is _check_dir_meta: the changes path needs, {"directory": "new"}
// when it is missing.
func dirMeta(path string, usr, grp, mode any, follow bool) *ordered.Map {
	ch := ordered.New()
	st, err := file.Stats(path, "", follow)
	if err != nil {
		ch.Set("directory", "new")
		return ch
	}
	metaChanges(ch, st, usr, grp, mode, follow)
	return ch
}

func metaChanges(ch *ordered.Map, st *file.Stat, usr, grp, mode any, follow bool) {
	if usr != nil && ordered.KeyString(usr) != fmt.Sprint(st.User) && usr != st.UID {
		ch.Set("user", usr)
	}
	if grp != nil && ordered.KeyString(grp) != fmt.Sprint(st.Group) && grp != st.GID {
		ch.Set("group", grp)
	}
	if m, ok := mode.(string); ok && m != st.Mode && (follow || st.Type != "link") {
		ch.Set("mode", m)
	}
}

// checkDirectory is _check_directory: the predicted changes and the
// test-mode result and comment.
func checkDirectory(a *dirArgs) (states.Tri, string, *ordered.Map) {
	changes := ordered.New()
	var entries []walkEntry
	if a.recurse != nil || a.clean {
		entries = walk(a.name, a.maxDepth)
	}
	if a.recurse != nil {
		usr, grp, dmode, fmode := recurseOwners(a)
		for _, e := range entries {
			if !a.recurse["ignore_files"] {
				for _, f := range e.files {
					p := filepath.Join(e.root, f)
					if st, err := file.Stats(p, "", a.follow); err == nil {
						ch := ordered.New()
						metaChanges(ch, st, usr, grp, fmode, a.follow)
						if ch.Len() > 0 {
							changes.Set(p, ch)
						}
					}
				}
			}
			if !a.recurse["ignore_dirs"] {
				for _, d := range e.dirs {
					p := filepath.Join(e.root, d)
					if ch := dirMeta(p, usr, grp, dmode, a.follow); ch.Len() > 0 {
						changes.Set(p, ch)
					}
				}
			}
		}
	}
	if !a.childrenOnly {
		if ch := dirMeta(a.name, a.user, a.group, a.dirMode, a.follow); ch.Len() > 0 {
			changes.Set(a.name, ch)
		}
	}
	if a.clean {
		for _, p := range cleanCandidates(a, entries) {
			changes.Set(p, ordered.FromPairs("removed", "Removed due to clean"))
		}
	}
	if !isDir(a.name) {
		changes.Set(a.name, ordered.FromPairs("directory", "new"))
	}
	if changes.Len() == 0 {
		return states.True, fmt.Sprintf("The directory %s is in the correct state", a.name), changes
	}
	var b strings.Builder
	b.WriteString("The following files will be changed:\n")
	changes.Range(func(k, v any) bool {
		v.(*ordered.Map).Range(func(key, val any) bool {
			fmt.Fprintf(&b, "%s: %s - %s\n", ordered.KeyString(k), ordered.KeyString(key), py.Str(val))
			return true
		})
		return true
	})
	return states.None, b.String(), changes
}

// recurseOwners drops what recurse does not name.
func recurseOwners(a *dirArgs) (usr, grp, dmode, fmode any) {
	if a.recurse["user"] {
		usr = a.user
	}
	if a.recurse["group"] {
		grp = a.group
	}
	if a.recurse["mode"] {
		dmode, fmode = a.dirMode, a.fileMode
	}
	return
}

// cleanCandidates lists what clean would remove: everything under name
// that is not kept (a required file and its parents) and matches
// exclude_pat's complement.
func cleanCandidates(a *dirArgs, entries []walkEntry) []string {
	keep := map[string]bool{a.name: true}
	for _, k := range a.keep {
		for p := k; ; p = filepath.Dir(p) {
			keep[p] = true
			if p == "/" || p == "." {
				break
			}
		}
		if isDir(k) && strings.HasPrefix(k+"/", a.name+"/") {
			_ = filepath.WalkDir(k, func(p string, _ fs.DirEntry, err error) error {
				if err == nil {
					keep[p] = true
				}
				return nil
			})
		}
	}
	var out []string
	for _, e := range entries {
		for _, n := range append(append([]string{}, e.dirs...), e.files...) {
			p := filepath.Join(e.root, n)
			if keep[p] {
				continue
			}
			rel, _ := filepath.Rel(a.name, p)
			if a.exclude != "" && excluded(rel, a.exclude) {
				continue
			}
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// excluded is check_include_exclude(rel, None, exclude_pat) being
// false: "E@" prefixes a regular expression, anything else is a glob.
func excluded(rel, pat string) bool {
	if re, ok := strings.CutPrefix(pat, "E@"); ok {
		if r, err := file.CompilePy(re, 0); err == nil {
			return r.MatchString(rel)
		}
		return false
	}
	m, _ := filepath.Match(pat, rel)
	if !m {
		m, _ = filepath.Match(pat, filepath.Base(rel))
	}
	return m
}

// applyDirectory creates the directory and fixes ownership and modes.
func applyDirectory(c *states.Call, a *dirArgs, r *states.Result) (*states.Result, error) {
	name := a.name
	if !isDir(name) {
		if !isDir(filepath.Dir(name)) {
			if !c.Bool("makedirs") {
				r.Result, r.Comment = states.False, fmt.Sprintf("No directory to create %s in", name)
				return r, nil
			}
			if _, err := file.Makedirs(name, a.user, a.group, a.dirMode, false); err != nil {
				return nil, err
			}
		}
		if err := file.Mkdir(name, a.user, a.group, a.dirMode, false); err != nil {
			return nil, err
		}
		if !isDir(name) {
			return fail(name, fmt.Sprintf("Failed to create directory %s", name)), nil
		}
		r.Changes.Set(name, ordered.FromPairs("directory", "new"))
		return r, nil
	}
	// Salt keeps the predicted per-path changes and adds check_perms'
	// flat user/group/mode keys to them.
	ret := file.NewRet(name)
	ret.Changes = r.Changes
	var err error
	if !a.childrenOnly {
		if ret, _, err = file.CheckPerms(name, ret, a.user, a.group, a.dirMode, a.follow, false); err != nil {
			return nil, err
		}
	}
	var errs []string
	if a.recurse != nil {
		errs = applyRecurse(a, ret)
	}
	if a.clean {
		removed := cleanCandidates(a, walk(name, -1))
		for _, p := range removed {
			_ = os.RemoveAll(p)
		}
		if len(removed) > 0 {
			l := make([]any, len(removed))
			for i, p := range removed {
				l[i] = p
			}
			ret.Changes.Set("removed", l)
			ret.Comment = fmt.Sprintf("Files cleaned from directory %s", name)
		}
	}
	if ret.Comment == "" && ret.Changes.Len() > 0 {
		if a.childrenOnly {
			ret.Comment = fmt.Sprintf("Directory %s/* updated", name)
		} else {
			ret.Comment = fmt.Sprintf("Directory %s updated", name)
		}
	}
	if ret.Changes.Len() == 0 && ret.Result == true {
		orig := ret.Comment
		ret.Comment = fmt.Sprintf("Directory %s is in the correct state", name)
		if orig != "" {
			ret.Comment += "\n" + orig
		}
	}
	if len(errs) > 0 {
		ret.Result = false
		ret.Comment += "\n\nThe following errors were encountered:\n"
		for _, e := range errs {
			ret.Comment += "\n- " + e
		}
	}
	return result(ret), nil
}

// applyRecurse applies user, group and modes below the directory, as
// the recurse branch of Salt's directory does.
func applyRecurse(a *dirArgs, ret *file.Ret) []string {
	usr, grp, dmode, fmode := recurseOwners(a)
	if a.recurse["user"] {
		if !modules.Truthy(a.user) && !isIntVal(a.user) {
			ret.Result, ret.Comment = false, "user not specified, but configured as a target for recursive ownership management"
		} else if _, ok := file.UserToUID(a.user); !ok {
			ret.Result, ret.Comment = false, fmt.Sprintf("Failed to enforce ownership for user %s (user does not exist)", py.Str(a.user))
		}
	}
	if a.recurse["group"] {
		if !modules.Truthy(a.group) && !isIntVal(a.group) {
			ret.Result, ret.Comment = false, "group not specified, but configured as a target for recursive ownership management"
		} else if _, ok := file.GroupToGID(a.group); !ok {
			ret.Result, ret.Comment = false, fmt.Sprintf("Failed to enforce group ownership for group %s", py.Str(a.group))
		}
	}
	if a.recurse["silent"] {
		ret.Changes = ordered.FromPairs("recursion", "Changes silenced")
	}
	var errs []string
	for _, e := range walk(a.name, a.maxDepth) {
		if !a.recurse["ignore_files"] {
			for _, f := range e.files {
				if _, _, err := file.CheckPerms(filepath.Join(e.root, f), ret, usr, grp, fmode, a.follow, false); err != nil && !strings.HasPrefix(err.Error(), "Path not found") {
					errs = append(errs, err.Error())
				}
			}
		}
		if !a.recurse["ignore_dirs"] {
			for _, d := range e.dirs {
				if _, _, err := file.CheckPerms(filepath.Join(e.root, d), ret, usr, grp, dmode, a.follow, false); err != nil && !strings.HasPrefix(err.Error(), "Path not found") {
					errs = append(errs, err.Error())
				}
			}
		}
	}
	return errs
}

func isIntVal(v any) bool { _, ok := v.(int); return ok }
