package file

import (
	"fmt"
	"os"
	"strings"

	"github.com/brinesalt/brine/state/ordered"
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
	nmode, hasMode := NormalizeMode(mode)
	var comments []string
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
	isLink := fi != nil && fi.Mode()&os.ModeSymlink != 0
	wantUser := usr != nil && (truthyOwner(usr)) && !ownerMatches(usr, cur.User, cur.UID)
	wantGroup := grp != nil && truthyOwner(grp) && !ownerMatches(grp, cur.Group, cur.GID)
	if (wantUser || wantGroup) && !test {
		u, g := usr, grp
		if u == nil {
			u = cur.User
		}
		if g == nil {
			g = cur.Group
		}
		msg, err := Chown(name, u, g, isLink && !follow)
		switch {
		case err != nil:
			ret.Result = false
		case msg != "":
			ret.Result = false
			comments = append(comments, msg)
		case !isLink:
			_, _ = SetMode(name, cur.Mode)
		}
	}
	changedMode := false
	skipMode := isLink && !follow
	if hasMode && !test && !skipMode && nmode != cur.Mode {
		changedMode = true
		if msg, err := SetMode(name, nmode); err != nil {
			return ret, perms, err
		} else if strings.HasPrefix(msg, "Invalid Mode") {
			comments = append(comments, msg)
		}
	}
	post, err := Stats(name, "", follow)
	if err != nil {
		return ret, perms, err
	}
	if usr != nil && truthyOwner(usr) {
		if !ownerMatches(usr, post.User, post.UID) {
			if test {
				ret.Changes.Set("user", usr)
			} else {
				ret.Result = false
				comments = append(comments, fmt.Sprintf("Failed to change user to %s", ordered.KeyString(usr)))
			}
		} else if wantUser {
			ret.Changes.Set("user", usr)
		}
	}
	if grp != nil && truthyOwner(grp) {
		if !ownerMatches(grp, post.Group, post.GID) {
			if test {
				ret.Changes.Set("group", grp)
			} else {
				ret.Result = false
				comments = append(comments, fmt.Sprintf("Failed to change group to %s", ordered.KeyString(grp)))
			}
		} else if wantGroup {
			ret.Changes.Set("group", grp)
		}
	}
	if hasMode && !skipMode {
		if nmode != post.Mode {
			if test {
				ret.Changes.Set("mode", nmode)
			} else {
				ret.Result = false
				comments = append(comments, fmt.Sprintf("Failed to change mode to %s", nmode))
			}
		} else if changedMode {
			ret.Changes.Set("mode", nmode)
		}
	}
	if ret.Comment != "" {
		comments = append([]string{ret.Comment}, comments...)
	}
	ret.Comment = strings.Join(comments, "; ")
	if test && ret.Changes.Len() > 0 {
		ret.Result = nil
	}
	return ret, perms, nil
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
