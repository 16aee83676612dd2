package filestate

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/modules/file"
	"github.com/brinesalt/brine/state/states"
)

var hardlinkSpec = spec(true, modules.Param{Name: "target"}, opt("force", false), opt("makedirs", false),
	opt("user", nil), opt("group", nil), opt("dir_mode", nil))

func sameInode(a, b string) bool {
	fa, erra := os.Lstat(a)
	fb, errb := os.Lstat(b)
	return erra == nil && errb == nil && os.SameFile(fa, fb)
}

func isHardlink(p string) bool {
	n, ok := file.Nlink(p)
	return ok && n > 1
}

// hardlinkCheck is _hardlink_check, the test-mode prediction.
func hardlinkCheck(name, target string, force bool) *states.Result {
	r := states.NewResult(name, states.False, "")
	switch {
	case !pathExists(target):
		r.Comment = fmt.Sprintf("Target %s for hard link does not exist", target)
	case isDir(target):
		r.Comment = fmt.Sprintf("Unable to hard link from directory %s", target)
	case isDir(name):
		r.Comment = fmt.Sprintf("Unable to hard link to directory %s", name)
	case !pathExists(name):
		r.Result, r.Comment = states.None, fmt.Sprintf("Hard link %s to %s is set for creation", name, target)
		r.Changes.Set("new", name)
	case isHardlink(name) && sameInode(name, target):
		r.Result, r.Comment = states.True, fmt.Sprintf("The hard link %s is presently targetting %s", name, target)
	case isHardlink(name):
		r.Result, r.Comment = states.None, fmt.Sprintf("Link %s target is set to be changed to %s", name, target)
		r.Changes.Set("change", name)
	case force:
		r.Result, r.Comment = states.None, fmt.Sprintf("The file or directory %s is set for removal to make way for a new hard link targeting %s", name, target)
	default:
		r.Comment = fmt.Sprintf("File or directory exists where the hard link %s should be. Did you mean to use force?", name)
	}
	return r
}

// hardlink is file.hardlink.
func hardlink(_ context.Context, c *states.Call) (*states.Result, error) {
	name, target := expandUser(c.Str("name")), c.Str("target")
	if name == "" {
		return fail(name, "Must provide name to file.hardlink"), nil
	}
	usr, grp := defaultOwner(c, owner(c), c.Arg("group"))
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
	if !filepath.IsAbs(target) {
		pre = append(pre, fmt.Sprintf("Specified target %s is not an absolute path", target))
	}
	if len(pre) > 0 {
		msg := strings.Join(pre, ". ")
		if len(pre) > 1 {
			msg += "."
		}
		return fail(name, msg), nil
	}
	if c.Env.Test {
		return hardlinkCheck(name, target, c.Bool("force")), nil
	}
	for _, d := range []struct{ dir, p string }{{"to", name}, {"from", target}} {
		if isDir(d.p) {
			return fail(name, fmt.Sprintf("Unable to hard link %s directory %s", d.dir, d.p)), nil
		}
	}
	if !pathExists(target) {
		return fail(name, fmt.Sprintf("Target %s for hard link does not exist", target)), nil
	}
	if dir := filepath.Dir(name); !isDir(dir) {
		if !c.Bool("makedirs") {
			return fail(name, fmt.Sprintf("Directory %s for hard link is not present", dir)), nil
		}
		if _, err := file.Makedirs(name, usr, grp, normMode(c.Arg("dir_mode")), false); err != nil {
			return nil, err
		}
	}
	return hardlinkApply(c, name, target)
}

func hardlinkApply(c *states.Call, name, target string) (*states.Result, error) {
	r := states.NewResult(name, states.True, "")
	if isFile(name) && !isHardlink(name) {
		if !c.Bool("force") {
			return fail(name, fmt.Sprintf("File exists where the hard link %s should be", name)), nil
		}
		if err := os.Remove(name); err != nil {
			return nil, err
		}
		r.Changes.Set("forced", "File for hard link was forcibly replaced")
	}
	verb := "Created new"
	if isHardlink(name) {
		if sameInode(name, target) {
			r.Comment = fmt.Sprintf("Target of hard link %s is already pointing to %s", name, target)
			return r, nil
		}
		if err := os.Remove(name); err != nil {
			return nil, err
		}
		verb = "Set target of"
	} else if pathExists(name) {
		return r, nil
	}
	if err := os.Link(target, name); err != nil {
		what := "create new"
		if verb != "Created new" {
			what = "set target of"
		}
		r.Result = states.False
		r.Comment = fmt.Sprintf("Unable to %s hard link %s -> %s: Could not create '%s': %s", what, name, target, name, err.Error())
		return r, nil
	}
	r.Comment = fmt.Sprintf("%s hard link %s -> %s", verb, name, target)
	r.Changes.Set("new", name)
	return r, nil
}

var prunedSpec = spec(false, opt("recurse", false), opt("ignore_errors", false), opt("older_than", nil))

// pruned is file.pruned: remove a directory once it is empty (with
// recurse, the empty directories under it too).
func pruned(_ context.Context, c *states.Call) (*states.Result, error) {
	name := expandUser(c.Str("name"))
	r := states.NewResult(name, states.True, "")
	recurse := c.Bool("recurse") || c.Bool("ignore_errors")
	if !isDir(name) {
		r.Comment = fmt.Sprintf("Directory %s is not present", name)
		return r, nil
	}
	if c.Env.Test {
		r.Result, r.Comment = states.None, fmt.Sprintf("Directory %s is set for removal", name)
		r.Changes.Set("deleted", name)
		return r, nil
	}
	days, _ := c.Arg("older_than").(int)
	res, err := file.Rmdir(name, recurse, days)
	if err != nil {
		return nil, err
	}
	deleted := make([]any, len(res.Deleted))
	sorted := append([]string(nil), res.Deleted...)
	sortStrings(sorted)
	for i, d := range sorted {
		deleted[i] = d
	}
	switch {
	case res.Result && recurse && len(deleted) > 0, !res.Result && c.Bool("ignore_errors") && len(deleted) > 0:
		r.Comment = fmt.Sprintf("Recursively removed empty directories under %s", name)
		r.Changes.Set("deleted", deleted)
	case res.Result && !recurse:
		r.Comment = fmt.Sprintf("Removed directory %s", name)
		r.Changes.Set("deleted", name)
	case res.Result:
	default:
		m := res.Map()
		m.Delete("result")
		r.Result, r.Changes, r.Comment = states.False, m, fmt.Sprintf("Failed to remove directory %s", name)
	}
	return r, nil
}

func sortStrings(l []string) { sort.Strings(l) }
