package file

import (
	"fmt"
	"os"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
)

// Ret is a state-style return that the managed-file helpers fill in, as
// Salt's file module threads the state's ret dict through manage_file
// and check_perms. Result is true, false or nil (test mode: would change).
type Ret struct {
	Name     string
	Result   any
	Comment  string
	Changes  *ordered.Map
	Warnings []any
}

// NewRet returns a passing Ret with no changes.
func NewRet(name string) *Ret { return &Ret{Name: name, Result: true, Changes: ordered.New()} }

// Fail sets result false and the comment (Salt's _error).
func (r *Ret) Fail(msg string) *Ret {
	r.Result, r.Comment = false, msg
	return r
}

// Map returns r as Salt's ret dict.
func (r *Ret) Map() *ordered.Map {
	m := ordered.FromPairs("name", r.Name, "changes", r.Changes, "result", r.Result, "comment", r.Comment)
	if len(r.Warnings) > 0 {
		m.Set("warnings", r.Warnings)
	}
	return m
}

// Perms is the perms dict check_perms returns beside ret: the current
// user, group and mode and what it changed.
type Perms struct {
	LUser, LGroup any
	LMode         string
}

// ownerMatches is check_perms' `user == cur["user"] or user == cur["uid"]`.
func ownerMatches(want any, name any, id int) bool {
	if n, ok := want.(int); ok {
		return n == id || fmt.Sprint(name) == fmt.Sprint(n) && isInt(name)
	}
	return ordered.KeyString(want) == fmt.Sprint(name) && !isInt(name)
}

func isInt(v any) bool { _, ok := v.(int); return ok }

// CheckPerms is file.check_perms: set user, group and mode of name
// (unless test) and record what changed in ret. Failures are reported in
// ret, joined with "; " after any comment ret already had. mode is
// normalized first; nil user, group or mode are left alone.
func CheckPerms(name string, ret *Ret, usr, grp, mode any, follow, test bool) (*Ret, *Perms, error) {
	if ret == nil {
		ret = NewRet(name)
	}
	cur, err := Stats(name, "", follow)
	if err != nil {
		return ret, nil, err
	}
	perms := &Perms{LUser: cur.User, LGroup: cur.Group, LMode: cur.Mode}
	if isInt(usr) {
		perms.LUser = cur.UID
	}
	if isInt(grp) {
		perms.LGroup = cur.GID
	}
	fi, _ := os.Lstat(name)
	pc := &permCheck{name: name, ret: ret, test: test, follow: follow,
		isLink: fi != nil && fi.Mode()&os.ModeSymlink != 0}
	pc.wantUser = truthyOwner(usr) && !ownerMatches(usr, cur.User, cur.UID)
	pc.wantGroup = truthyOwner(grp) && !ownerMatches(grp, cur.Group, cur.GID)
	pc.chown(cur, usr, grp)
	nmode, hasMode := NormalizeMode(mode)
	hasMode = hasMode && !(pc.isLink && !follow)
	changedMode := false
	if hasMode && !test && nmode != cur.Mode {
		changedMode = true
		msg, err := SetMode(name, nmode)
		if err != nil {
			return ret, perms, err
		}
		if strings.HasPrefix(msg, "Invalid Mode") {
			pc.comments = append(pc.comments, msg)
		}
	}
	// Nothing was changed: the first look is still the file's state, so
	// it is not stat'ed (and its owner names looked up) a second time.
	post := cur
	if changedMode || pc.chowned {
		if post, err = Stats(name, "", follow); err != nil {
			return ret, perms, err
		}
	}
	pc.verifyOwner("user", usr, post.User, post.UID, pc.wantUser)
	pc.verifyOwner("group", grp, post.Group, post.GID, pc.wantGroup)
	if hasMode {
		pc.verify("mode", nmode, nmode == post.Mode, changedMode, "Failed to change mode to "+nmode)
	}
	if ret.Comment != "" {
		pc.comments = append([]string{ret.Comment}, pc.comments...)
	}
	ret.Comment = strings.Join(pc.comments, "; ")
	if test && ret.Changes.Len() > 0 {
		ret.Result = nil
	}
	return ret, perms, nil
}

// permCheck carries one check_perms call's state between its steps.
type permCheck struct {
	name                 string
	ret                  *Ret
	comments             []string
	test, follow, isLink bool
	wantUser, wantGroup  bool
	chowned              bool // chown was attempted
}

// chown changes the owner when it differs (never in test mode) and puts
// the mode back, as chown may clear setuid bits.
func (pc *permCheck) chown(cur *Stat, usr, grp any) {
	if !(pc.wantUser || pc.wantGroup) || pc.test {
		return
	}
	if usr == nil {
		usr = cur.User
	}
	if grp == nil {
		grp = cur.Group
	}
	pc.chowned = true
	msg, err := Chown(pc.name, usr, grp, pc.isLink && !pc.follow)
	switch {
	case err != nil:
		pc.ret.Result = false
	case msg != "":
		pc.ret.Result = false
		pc.comments = append(pc.comments, msg)
	case !pc.isLink:
		_, _ = SetMode(pc.name, cur.Mode)
	}
}

func (pc *permCheck) verifyOwner(key string, want, name any, id int, wanted bool) {
	if !truthyOwner(want) {
		return
	}
	pc.verify(key, want, ownerMatches(want, name, id), wanted,
		fmt.Sprintf("Failed to change %s to %s", key, ordered.KeyString(want)))
}

// verify records key's change after the fact: in test mode whatever
// differs, otherwise what was changed, or a failure.
func (pc *permCheck) verify(key string, want any, ok, changed bool, failMsg string) {
	switch {
	case !ok && pc.test:
		pc.ret.Changes.Set(key, want)
	case !ok:
		pc.ret.Result = false
		pc.comments = append(pc.comments, failMsg)
	case changed:
		pc.ret.Changes.Set(key, want)
	}
}

// truthyOwner is Python's `if user:` for an owner value, except that
// check_perms treats uid 0 given as an int as falsy too.
func truthyOwner(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case string:
		return x != ""
	case int:
		return x != 0
	}
	return true
}
