package filestate

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/modules/file"
	"github.com/brinesalt/brine/state/states"
)

var recurseSpec = spec(true, modules.Param{Name: "source"},
	opt("keep_source", true), opt("clean", false), opt("require", nil), opt("user", nil),
	opt("group", nil), opt("dir_mode", nil), opt("file_mode", nil), opt("sym_mode", nil),
	opt("template", nil), opt("context", nil), opt("replace", true), opt("defaults", nil),
	opt("include_empty", false), opt("backup", ""), opt("include_pat", nil), opt("exclude_pat", nil),
	opt("maxdepth", nil), opt("keep_symlinks", false), opt("force_symlinks", false),
	opt("win_owner", nil), opt("win_perms", nil), opt("win_deny_perms", nil),
	opt("win_inheritance", true), opt("win_perms_reset", false))

// FileLister is implemented by file clients that can list a saltenv
// (state/fileclient.Client does): file.recurse needs it, as Salt's needs
// cp.list_master.
type FileLister interface {
	FileList(saltenv string) []string
}

// recurseRet accumulates the per-path results as recurse's merge_ret.
type recurseRet struct {
	result   states.Tri
	changes  *ordered.Map
	comments *ordered.Map // path → []string
}

func (rr *recurseRet) merge(p string, r *states.Result) {
	if r.Result == states.False || rr.result == states.True {
		rr.result = r.Result
	}
	if r.Result != states.True && r.Comment != "" {
		l, _ := rr.comments.Value(p).([]string)
		rr.comments.Set(p, append(l, r.Comment))
	}
	if r.Changes.Len() > 0 {
		rr.changes.Set(p, r.Changes)
	}
}

// recurse is file.recurse: mirror a salt:// directory with file.managed
// for every file and file.directory for every directory.
func recurse(ctx context.Context, c *states.Call) (*states.Result, error) {
	name := expandUser(c.Str("name"))
	if _, ok := c.Kw("mode"); ok {
		return fail(name, "'mode' is not allowed in 'file.recurse'. Please use 'file_mode' and 'dir_mode'."), nil
	}
	usr, grp := owner(c), c.Arg("group")
	if msg := checkUser(c, usr, grp); msg != "" {
		return fail(name, msg), nil
	}
	if !filepath.IsAbs(name) {
		return fail(name, fmt.Sprintf("Specified file %s is not an absolute path", name)), nil
	}
	src, senv, res := recurseSource(c, name)
	if res != nil {
		return res, nil
	}
	lister, _ := c.Env.Files.(FileLister)
	if lister == nil {
		return fail(name, "Recurse failed: the file client cannot list directories"), nil
	}
	files := listUnder(lister.FileList(senv), src)
	if len(files) == 0 {
		return fail(name, fmt.Sprintf("The directory '%s' does not exist on the salt fileserver in saltenv '%s'", src, senv)), nil
	}
	if !isDir(name) {
		if pathExists(name) {
			return fail(name, fmt.Sprintf("The path %s exists and is not a directory", name)), nil
		}
		if !c.Env.Test {
			if err := file.Mkdir(name, usr, grp, normMode(c.Arg("dir_mode")), false); err != nil {
				return nil, err
			}
		}
	}
	rr := &recurseRet{result: states.True, changes: ordered.New(), comments: ordered.New()}
	dirs, managedFiles := recursePlan(c, name, src, files)
	for _, d := range dirs {
		r, err := directory(ctx, subCall(c, directorySpec, map[string]any{"name": d, "user": usr, "group": grp,
			"dir_mode": c.Arg("dir_mode"), "makedirs": true}))
		if err != nil {
			return nil, err
		}
		rr.merge(d, r)
	}
	for _, f := range managedFiles {
		args := map[string]any{"name": f[0], "source": "salt://" + f[1] + saltenvQuery(senv, c),
			"user": usr, "group": grp, "mode": c.Arg("file_mode"), "template": c.Arg("template"),
			"makedirs": true, "replace": c.Arg("replace"), "context": c.Arg("context"),
			"defaults": c.Arg("defaults"), "backup": c.Arg("backup"), "keep_source": c.Arg("keep_source")}
		r, err := managed(ctx, subCall(c, managedSpec, args))
		if err != nil {
			return nil, err
		}
		rr.merge(f[0], r)
	}
	if c.Bool("clean") {
		recurseClean(c, name, managedFiles, rr)
	}
	return rr.finish(name), nil
}

func saltenvQuery(senv string, c *states.Call) string {
	if senv != saltenv(c) {
		return "?saltenv=" + senv
	}
	return ""
}

// recurseSource validates the salt:// sources and picks the first that
// exists.
func recurseSource(c *states.Call, name string) (src, senv string, res *states.Result) {
	var list []string
	switch v := c.Arg("source").(type) {
	case []any:
		for _, x := range v {
			list = append(list, strings.TrimRight(py.Str(x), "/"))
		}
	default:
		list = []string{strings.TrimRight(py.Str(v), "/")}
	}
	for _, s := range list {
		if !strings.HasPrefix(s, "salt://") {
			return "", "", fail(name, fmt.Sprintf("Invalid source '%s' (must be a salt:// URI)", s))
		}
	}
	lister, _ := c.Env.Files.(FileLister)
	for _, s := range list {
		rel, env := parseSaltURL(s)
		if env == "" {
			env = saltenv(c)
		}
		if lister != nil && len(listUnder(lister.FileList(env), rel)) > 0 {
			return rel, env, nil
		}
	}
	if len(list) > 1 {
		return "", "", fail(name, "Recurse failed: none of the specified sources were found")
	}
	rel, env := parseSaltURL(list[0])
	if env == "" {
		env = saltenv(c)
	}
	return rel, env, nil
}

func parseSaltURL(u string) (rel, env string) {
	rel = strings.TrimPrefix(u, "salt://")
	if i := strings.Index(rel, "?"); i >= 0 {
		for _, kv := range strings.Split(rel[i+1:], "&") {
			if v, ok := strings.CutPrefix(kv, "saltenv="); ok {
				env = v
			}
		}
		rel = rel[:i]
	}
	return strings.Trim(rel, "/"), env
}

func listUnder(all []string, dir string) []string {
	var out []string
	for _, f := range all {
		if strings.HasPrefix(f, dir+"/") {
			out = append(out, f)
		}
	}
	return out
}

// recursePlan is _gen_recurse_managed_files: the directories and
// (dest, salt path) pairs, filtered by maxdepth and include/exclude_pat.
func recursePlan(c *states.Call, name, src string, files []string) (dirs []string, out [][2]string) {
	seen := map[string]bool{}
	maxDepth, hasDepth := c.Arg("maxdepth").(int)
	for _, f := range files {
		rel := strings.TrimPrefix(f, src+"/")
		if hasDepth && strings.Count(rel, "/") > maxDepth {
			continue
		}
		if !includeExclude(rel, c.Str("include_pat"), c.Str("exclude_pat")) {
			continue
		}
		dest := filepath.Join(name, filepath.FromSlash(rel))
		if d := filepath.Dir(dest); !seen[d] {
			seen[d] = true
			dirs = append(dirs, d)
		}
		out = append(out, [2]string{dest, f})
	}
	sort.Strings(dirs)
	return dirs, out
}

// includeExclude is salt.utils.stringutils.check_include_exclude.
func includeExclude(rel, include, exclude string) bool {
	match := func(pat string) bool {
		if re, ok := strings.CutPrefix(pat, "E@"); ok {
			return excluded(rel, "E@"+re)
		}
		ok, _ := path.Match(pat, rel)
		return ok
	}
	switch {
	case include == "" && exclude == "":
		return true
	case include != "" && exclude == "":
		return match(include)
	case include == "" && exclude != "":
		return !match(exclude)
	}
	return match(include) && !match(exclude)
}

// recurseClean removes what the source does not have: the managed
// files and their parent directories are kept.
func recurseClean(c *states.Call, name string, files [][2]string, rr *recurseRet) {
	keep := []string{}
	for _, f := range files {
		keep = append(keep, f[0])
	}
	a := &dirArgs{name: name, keep: keep, exclude: c.Str("exclude_pat"), maxDepth: -1}
	removed := cleanCandidates(a, walk(name, -1))
	if len(removed) == 0 {
		return
	}
	l := make([]any, len(removed))
	for i, p := range removed {
		l[i] = p
	}
	if c.Env.Test {
		if rr.result == states.True {
			rr.result = states.None
		}
		strs := make([]string, len(removed))
		copy(strs, removed)
		rr.comments.Set("removed", strs)
		return
	}
	for _, p := range removed {
		_ = removeAll(p)
	}
	rr.changes.Set("removed", l)
}

func (rr *recurseRet) finish(name string) *states.Result {
	var parts []string
	rr.comments.Range(func(k, v any) bool {
		parts = append(parts, fmt.Sprintf("\n#### %s ####\n%s", ordered.KeyString(k), strings.Join(v.([]string), "\n")))
		return true
	})
	comment := strings.TrimSpace(strings.Join(parts, "\n"))
	if comment == "" {
		comment = fmt.Sprintf("Recursively updated %s", name)
	}
	if rr.changes.Len() == 0 && rr.result == states.True {
		comment = fmt.Sprintf("The directory %s is in the correct state", name)
	}
	r := states.NewResult(name, rr.result, comment)
	r.Changes = rr.changes
	return r
}

// subCall builds a call of another file state with args over defaults.
func subCall(c *states.Call, s modules.Spec, args map[string]any) *states.Call {
	nc := &states.Call{Env: c.Env, Saltenv: c.Saltenv, Low: c.Low, Kwargs: ordered.New(), Args: map[string]any{}}
	for _, p := range s.Params {
		nc.Args[p.Name] = p.Default
	}
	for k, v := range args {
		if v == nil {
			continue
		}
		nc.Args[k] = v
	}
	return nc
}
