package userstate

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/states"
)

// desired is what user.present asks for.
type desired struct {
	c         *states.Call
	name      string
	groups    []string
	hasGroups bool
	optGroups []string
	gid       any
}

// changes is _changes: the attributes to change, or exists false when
// there is no such user. A refused uid or gid change is an error worded
// as Salt's CommandExecutionError with info.
func (d *desired) changes(ctx context.Context, allowUID, allowGID bool) (*ordered.Map, bool, error) {
	c := d.c
	lusr, err := info(ctx, c, "user.info", d.name)
	if err != nil || lusr.Len() == 0 {
		return nil, false, err
	}
	lshad, err := info(ctx, c, "shadow.info", d.name)
	if err != nil {
		return nil, true, err
	}
	ch := ordered.New()
	if uid := c.Arg("uid"); modules.Truthy(uid) && str(lusr.Value("uid")) != str(uid) {
		ch.Set("uid", uid)
	}
	if d.gid != nil {
		g, err := groupToGID(ctx, c, d.gid)
		if err != nil {
			return nil, true, err
		}
		if cur := str(lusr.Value("gid")); cur != str(d.gid) && cur != g {
			ch.Set("gid", d.gid)
		}
	}
	if err := d.groupsChange(ctx, lusr, ch); err != nil {
		return nil, true, err
	}
	d.homeAndShell(lusr, ch)
	d.passwordChange(lshad, ch)
	for _, k := range []string{"fullname", "roomnumber", "workphone", "homephone", "other"} {
		if v := c.Arg(k); v != nil && str(lusr.Value(k)) != str(v) {
			ch.Set(k, str(v))
		}
	}
	var errs []string
	if !allowUID && ch.Has("uid") {
		errs = append(errs, fmt.Sprintf("Changing uid (%s -> %s) not permitted, set allow_uid_change to True to force this change. Note that this will not change file ownership.", str(lusr.Value("uid")), str(c.Arg("uid"))))
	}
	if !allowGID && ch.Has("gid") {
		errs = append(errs, fmt.Sprintf("Changing gid (%s -> %s) not permitted, set allow_gid_change to True to force this change. Note that this will not change file ownership.", str(lusr.Value("gid")), str(d.gid)))
	}
	if len(errs) > 0 {
		//lint:ignore ST1005 Salt's exact message
		return nil, true, fmt.Errorf("Encountered error checking for needed changes. Additional info follows:\n\n- %s", strings.Join(errs, "\n- "))
	}
	return ch, true, nil
}

// groupsChange adds "groups" when the supplementary groups differ, the
// primary group (old and new) and the user's own group left out.
func (d *desired) groupsChange(ctx context.Context, lusr, ch *ordered.Map) error {
	c := d.c
	curGroups := strList(lusr.Value("groups"))
	wanted := uniqSorted(append(append([]string(nil), d.groups...), d.optGroups...))
	removeGroups := c.Bool("remove_groups")
	if !removeGroups || (!d.hasGroups && len(d.optGroups) == 0) {
		wanted = uniqSorted(append(wanted, curGroups...))
	}
	def := lusr.Value("gid")
	if d.gid != nil {
		def = d.gid
	}
	defGrp, err := gidToGroup(ctx, c, def)
	if err != nil {
		return err
	}
	oldDefGrp, err := gidToGroup(ctx, c, lusr.Value("gid"))
	if err != nil {
		return err
	}
	if contains(curGroups, defGrp) || contains(wanted, defGrp) {
		curGroups, wanted = without(curGroups, defGrp), without(wanted, defGrp)
	}
	if oldDefGrp != defGrp {
		curGroups = without(curGroups, oldDefGrp)
	}
	if contains(curGroups, d.name) && !contains(wanted, d.name) {
		curGroups = without(curGroups, d.name)
	}
	if groupChanges(curGroups, wanted, removeGroups) && (len(wanted) > 0 || removeGroups) {
		l := make([]any, len(wanted))
		for i, g := range wanted {
			l[i] = g
		}
		ch.Set("groups", l)
	}
	return nil
}

func (d *desired) homeAndShell(lusr, ch *ordered.Map) {
	c := d.c
	if home := c.Str("home"); home != "" && str(lusr.Value("home")) != home {
		ch.Set("home", home)
	}
	if c.Bool("createhome") {
		newhome := c.Str("home")
		if newhome == "" {
			newhome = str(lusr.Value("home"))
		}
		if newhome != "" && !isDir(newhome) {
			ch.Set("homeDoesNotExist", newhome)
		}
	}
	if sh := c.Str("shell"); sh != "" && str(lusr.Value("shell")) != sh {
		ch.Set("shell", sh)
	}
}

// passwordChange sets a hash only over the unset one ("!") unless
// enforce_password, as with Salt's linux_shadow default_hash.
func (d *desired) passwordChange(lshad, ch *ordered.Map) {
	c := d.c
	cur := str(lshad.Value("passwd"))
	if pw := c.Str("password"); pw != "" && !c.Bool("empty_password") {
		if (cur == "!" || c.Bool("enforce_password")) && cur != pw {
			ch.Set("passwd", pw)
		}
	}
	if c.Bool("empty_password") && cur != "" {
		ch.Set("empty_password", true)
	}
}

// groupChanges is _group_changes without the shared-gid exception.
func groupChanges(cur, wanted []string, remove bool) bool {
	same := len(uniqSorted(cur)) == len(uniqSorted(wanted))
	subset := true
	for _, w := range wanted {
		if !contains(cur, w) {
			subset, same = false, false
		}
	}
	if same || (!remove && subset) {
		return false
	}
	return true
}

func uniqSorted(l []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range l {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	sort.Strings(out)
	return out
}

func without(l []string, s string) []string {
	var out []string
	for _, x := range l {
		if x != s {
			out = append(out, x)
		}
	}
	return out
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
