package userstate

import (
	"context"
	"fmt"
	"os"
	"strconv"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/states"
)

// update applies the changes to an existing user and reports what
// user.info and shadow.info show differently afterwards.
func update(ctx context.Context, c *states.Call, r *states.Result, d *desired, chs *ordered.Map) (*states.Result, error) {
	name := d.name
	lshad, err := info(ctx, c, "shadow.info", name)
	if err != nil {
		return nil, err
	}
	pre, err := info(ctx, c, "user.info", name)
	if err != nil {
		return nil, err
	}
	if chs.Has("passwd") {
		chs.Delete("passwd")
		if _, err := call(ctx, c, "shadow.set_password", []any{name, c.Str("password")}); err != nil {
			return nil, err
		}
	}
	if v, ok := chs.Get("empty_password"); ok {
		chs.Delete("empty_password")
		if v == true {
			if _, err := call(ctx, c, "shadow.del_password", []any{name}); err != nil {
				return nil, err
			}
		}
	}
	if err := changeHome(ctx, c, chs, pre); err != nil {
		return nil, err
	}
	for _, k := range chs.StringKeys() {
		if k == "groups" {
			continue
		}
		fun := "user.ch" + k
		if _, err := c.Env.Registry.Lookup(c.Env, fun); err != nil {
			continue
		}
		if _, err := call(ctx, c, fun, []any{name, chs.Value(k)}); err != nil {
			return nil, err
		}
		chs.Delete(k)
	}
	if g, ok := chs.Get("groups"); ok {
		chs.Delete("groups")
		if _, err := call(ctx, c, "user.chgroups", []any{name, g, !c.Bool("remove_groups")}); err != nil {
			return nil, err
		}
	}
	if chs.Len() > 0 {
		r.Warnings = append(r.Warnings, "Unhandled changes: "+joinKeys(chs))
	}
	post, err := info(ctx, c, "user.info", name)
	if err != nil {
		return nil, err
	}
	post.Range(func(k, v any) bool {
		if py.Repr(v) != py.Repr(pre.Value(k)) {
			r.Changes.Set(k, v)
		}
		return true
	})
	if str(lshad.Value("passwd")) != c.Str("password") {
		spost, err := info(ctx, c, "shadow.info", name)
		if err != nil {
			return nil, err
		}
		spost.Range(func(k, v any) bool {
			if py.Repr(v) != py.Repr(lshad.Value(k)) {
				if k == "passwd" {
					v = redacted
				}
				r.Changes.Set(k, v)
			}
			return true
		})
	}
	if r.Changes.Len() > 0 {
		r.Comment = fmt.Sprintf("Updated user %s", name)
	}
	left, _, err := d.changes(ctx, true, true)
	if err != nil {
		return nil, err
	}
	if left.Len() > 0 {
		r.Result = states.False
		r.Comment = fmt.Sprintf("These values could not be changed: %s", py.Repr(left))
	}
	return r, nil
}

func joinKeys(m *ordered.Map) string {
	s := ""
	for i, k := range m.StringKeys() {
		if i > 0 {
			s += ", "
		}
		s += k
	}
	return s
}

// changeHome moves the home (user.chhome) and creates a missing one as
// file.mkdir would, owned by the user with mode 0755.
func changeHome(ctx context.Context, c *states.Call, chs *ordered.Map, pre *ordered.Map) error {
	name := c.Str("name")
	changed := false
	if v, ok := chs.Get("home"); ok {
		chs.Delete("home")
		if !chs.Has("homeDoesNotExist") {
			if _, err := call(ctx, c, "user.chhome", []any{name, v}, "persist", c.Arg("persist_home")); err != nil {
				return err
			}
			changed = true
		}
	}
	v, ok := chs.Get("homeDoesNotExist")
	if !ok {
		return nil
	}
	chs.Delete("homeDoesNotExist")
	home := str(v)
	if !changed {
		if _, err := call(ctx, c, "user.chhome", []any{name, home}, "persist", c.Arg("persist_home")); err != nil {
			return err
		}
	}
	if isDir(home) {
		return nil
	}
	if err := os.MkdirAll(home, 0o755); err != nil {
		return fmt.Errorf("create home %s: %w", home, err)
	}
	uid, _ := strconv.Atoi(str(pre.Value("uid")))
	gid, _ := strconv.Atoi(str(pre.Value("gid")))
	if err := os.Chown(home, uid, gid); err != nil {
		return fmt.Errorf("create home %s: %w", home, err)
	}
	return nil
}

// create adds a missing user (the changes-is-False branch of present).
func create(ctx context.Context, c *states.Call, r *states.Result, groups, optGroups []string) (*states.Result, error) {
	name := c.Str("name")
	if c.Env.Test {
		r.Result, r.Comment = states.None, fmt.Sprintf("User %s set to be added", name)
		return r, nil
	}
	all := append(append([]string(nil), groups...), optGroups...)
	var groupsArg any
	if len(all) > 0 {
		l := make([]any, len(all))
		for i, g := range all {
			l[i] = g
		}
		groupsArg = l
	} else if c.Arg("groups") != nil {
		groupsArg = c.Arg("groups")
	}
	kw := []any{"uid", c.Arg("uid"), "gid", c.Arg("gid"), "groups", groupsArg, "home", c.Arg("home"), "shell", c.Arg("shell"),
		"unique", c.Arg("unique"), "system", c.Arg("system"), "createhome", c.Arg("createhome"), "nologinit", c.Arg("nologinit"),
		"loginclass", c.Arg("loginclass"), "usergroup", c.Arg("usergroup")}
	for _, k := range []string{"fullname", "roomnumber", "workphone", "homephone", "other"} {
		v := c.Arg(k)
		if v == nil {
			v = ""
		}
		kw = append(kw, k, str(v))
	}
	ok, err := call(ctx, c, "user.add", []any{name}, kw...)
	if err != nil {
		return nil, err
	}
	if ok != true {
		r.Result, r.Comment = states.False, fmt.Sprintf("Failed to create new user %s", name)
		if s, isStr := ok.(string); isStr {
			r.Comment = s
		}
		return r, nil
	}
	r.Comment = fmt.Sprintf("New user %s created", name)
	if r.Changes, err = info(ctx, c, "user.info", name); err != nil {
		return nil, err
	}
	if !c.Bool("createhome") {
		r.Changes.Set("home", "")
	}
	pw := c.Str("password")
	if pw != "" && !c.Bool("empty_password") {
		if _, err := call(ctx, c, "shadow.set_password", []any{name, pw}); err != nil {
			return nil, err
		}
		spost, err := info(ctx, c, "shadow.info", name)
		if err != nil {
			return nil, err
		}
		if str(spost.Value("passwd")) != pw {
			r.Result = states.False
			r.Comment = fmt.Sprintf("User %s created but failed to set password to %s", name, redacted)
		}
		r.Changes.Set("password", redacted)
	}
	if c.Bool("empty_password") && pw == "" {
		if _, err := call(ctx, c, "shadow.del_password", []any{name}); err != nil {
			return nil, err
		}
		spost, err := info(ctx, c, "shadow.info", name)
		if err != nil {
			return nil, err
		}
		if str(spost.Value("passwd")) != "" {
			r.Result = states.False
			r.Comment = fmt.Sprintf("User %s created but failed to empty password", name)
		}
		r.Changes.Set("password", "")
	}
	return r, nil
}

// Absent is user.absent: userdel, reporting the user's own groups that
// went with it.
func Absent(ctx context.Context, c *states.Call) (*states.Result, error) {
	name := c.Str("name")
	r := states.NewResult(name, states.True, "")
	lusr, err := info(ctx, c, "user.info", name)
	if err != nil {
		return nil, err
	}
	if lusr.Len() == 0 {
		r.Comment = fmt.Sprintf("User %s is not present", name)
		return r, nil
	}
	if c.Env.Test {
		r.Result, r.Comment = states.None, fmt.Sprintf("User %s set for removal", name)
		return r, nil
	}
	before := strList(lusr.Value("groups"))
	ok, err := call(ctx, c, "user.delete", []any{name, c.Arg("purge"), c.Arg("force")})
	if err != nil {
		return nil, err
	}
	if !modules.Truthy(ok) {
		r.Result, r.Comment = states.False, fmt.Sprintf("Failed to remove user %s", name)
		return r, nil
	}
	for _, g := range uniqSorted(before) {
		gi, err := info(ctx, c, "group.info", g)
		if err != nil {
			return nil, err
		}
		if gi.Len() == 0 {
			r.Changes.Set(g+" group", "removed")
		}
	}
	r.Changes.Set(name, "removed")
	r.Comment = fmt.Sprintf("Removed user %s", name)
	return r, nil
}
