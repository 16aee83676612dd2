// Package groupstate is Salt's `group` state module (salt/states/group.py):
// present (gid, members, addusers, delusers, system, non_unique) and
// absent, working through the group execution functions.
package groupstate

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/states"
)

func init() { Register(states.Default) }

func opt(name string, def any) modules.Param {
	return modules.Param{Name: name, Optional: true, Default: def}
}

// Register adds the group state functions to r.
func Register(r *states.Registry) {
	r.Register(states.Function{Name: "group.present", Spec: modules.Spec{Params: []modules.Param{{Name: "name"},
		opt("gid", nil), opt("system", false), opt("addusers", nil), opt("delusers", nil), opt("members", nil),
		opt("non_unique", false)}}, Fn: Present})
	r.Register(states.Function{Name: "group.absent", Spec: modules.Spec{Params: []modules.Param{{Name: "name"}}}, Fn: Absent})
}

func salt(ctx context.Context, c *states.Call, fun string, args ...any) (any, error) {
	return c.Env.Run(ctx, fun, args, ordered.New())
}

func strList(v any) ([]string, bool) {
	switch x := v.(type) {
	case nil:
		return nil, false
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			out = append(out, ordered.KeyString(e))
		}
		return out, true
	case string:
		if x == "" {
			return []string{}, true
		}
		return strings.Split(x, ","), true
	}
	return []string{ordered.KeyString(v)}, true
}

// change is one entry of _changes, in Salt's insertion order.
type change struct {
	key string
	val any // int, []string, or a set ([]string marked set)
	set bool
}

func (ch change) repr() string {
	switch v := ch.val.(type) {
	case []string:
		l := make([]any, len(v))
		for i, s := range v {
			l[i] = s
		}
		r := py.Repr(l)
		if ch.set {
			if len(v) == 0 {
				return "set()"
			}
			return "{" + r[1:len(r)-1] + "}"
		}
		return r
	}
	return ordered.KeyString(ch.val)
}

func (ch change) value() any {
	if v, ok := ch.val.([]string); ok {
		l := make([]any, len(v))
		for i, s := range v {
			l[i] = s
		}
		return l
	}
	return ch.val
}

// changes is _changes: nil with exists false when there is no group.
func changes(ctx context.Context, c *states.Call) (out []change, exists bool, bad string, err error) {
	info, err := salt(ctx, c, "group.info", c.Str("name"))
	if err != nil {
		return nil, false, "", err
	}
	m, _ := info.(*ordered.Map)
	if m.Len() == 0 {
		return nil, false, "", nil
	}
	cur, _ := strList(m.Value("members"))
	if gid := c.Arg("gid"); modules.Truthy(gid) {
		n, err := strconv.Atoi(ordered.KeyString(gid))
		if err != nil {
			return nil, true, "Invalid gid", nil
		}
		if m.Value("gid") != n {
			out = append(out, change{key: "gid", val: n})
		}
	}
	members, hasMembers := strList(c.Arg("members"))
	switch {
	case hasMembers && len(members) == 0:
		if len(cur) > 0 {
			s := append([]string(nil), cur...)
			sort.Strings(s)
			out = append(out, change{key: "delusers", val: s, set: true})
		}
	case len(members) > 0 && symDiff(cur, members):
		out = append(out, change{key: "members", val: members})
	}
	if add, _ := strList(c.Arg("addusers")); len(add) > 0 {
		var todo []string
		for _, u := range add {
			if !contains(cur, u) {
				todo = append(todo, u)
			}
		}
		if len(todo) > 0 {
			out = append(out, change{key: "addusers", val: todo})
		}
	}
	if del, _ := strList(c.Arg("delusers")); len(del) > 0 {
		var todo []string
		for _, u := range del {
			if contains(cur, u) {
				todo = append(todo, u)
			}
		}
		if len(todo) > 0 {
			out = append(out, change{key: "delusers", val: todo})
		}
	}
	return out, true, "", nil
}

func symDiff(a, b []string) bool {
	for _, x := range a {
		if !contains(b, x) {
			return true
		}
	}
	for _, x := range b {
		if !contains(a, x) {
			return true
		}
	}
	return false
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func changeMap(chs []change) *ordered.Map {
	m := ordered.New()
	for _, ch := range chs {
		m.Set(ch.key, ch.value())
	}
	return m
}

// Present is group.present.
func Present(ctx context.Context, c *states.Call) (*states.Result, error) {
	name := c.Str("name")
	r := states.NewResult(name, states.True, fmt.Sprintf("Group %s is present and up to date", name))
	_, hasMembers := strList(c.Arg("members"))
	add, _ := strList(c.Arg("addusers"))
	del, _ := strList(c.Arg("delusers"))
	if hasMembers && (c.Arg("addusers") != nil || c.Arg("delusers") != nil) {
		r.Result = states.None
		r.Comment = `Error: Conflicting options "members" with "addusers" and/or "delusers" can not be used together. `
		return r, nil
	}
	for _, u := range add {
		if contains(del, u) {
			r.Result, r.Comment = states.None, "Error. Same user(s) can not be added and deleted simultaneously"
			return r, nil
		}
	}
	chs, exists, bad, err := changes(ctx, c)
	if err != nil {
		return nil, err
	}
	if bad != "" {
		r.Result, r.Comment = states.False, bad
		return r, nil
	}
	if !exists {
		return create(ctx, c, r)
	}
	if len(chs) == 0 {
		return r, nil
	}
	for _, ch := range chs {
		r.Comment += fmt.Sprintf("%s: %s\n", ch.key, ch.repr())
	}
	if c.Env.Test {
		r.Result = states.None
		return r, nil
	}
	if err := apply(ctx, c, chs); err != nil {
		return nil, err
	}
	after, _, _, err := changes(ctx, c)
	if err != nil {
		return nil, err
	}
	if len(after) > 0 {
		r.Result = states.False
		r.Comment += "Some changes could not be applied"
		r.Changes = ordered.FromPairs("Failed", changeMap(after))
	} else {
		r.Changes = ordered.FromPairs("Final", "All changes applied successfully")
	}
	return r, nil
}

func apply(ctx context.Context, c *states.Call, chs []change) error {
	name := c.Str("name")
	for _, ch := range chs {
		var err error
		switch ch.key {
		case "gid":
			_, err = c.Env.Run(ctx, "group.chgid", []any{name, c.Arg("gid")}, ordered.FromPairs("non_unique", c.Arg("non_unique")))
		case "addusers", "delusers":
			fun := "group.adduser"
			if ch.key == "delusers" {
				fun = "group.deluser"
			}
			for _, u := range ch.val.([]string) {
				if _, err = salt(ctx, c, fun, name, u); err != nil {
					return err
				}
			}
		case "members":
			members, _ := strList(c.Arg("members"))
			_, err = salt(ctx, c, "group.members", name, strings.Join(members, ","))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// create adds a missing group (the changes-is-False branch of present).
func create(ctx context.Context, c *states.Call, r *states.Result) (*states.Result, error) {
	name := c.Str("name")
	if c.Env.Test {
		r.Result, r.Comment = states.None, fmt.Sprintf("Group %s set to be added", name)
		return r, nil
	}
	gid := c.Arg("gid")
	if gid != nil && !c.Bool("non_unique") {
		all, err := salt(ctx, c, "group.getent")
		if err != nil {
			return nil, err
		}
		l, _ := all.([]any)
		for _, g := range l {
			if gm, ok := g.(*ordered.Map); ok && ordered.KeyString(gm.Value("gid")) == ordered.KeyString(gid) {
				r.Result = states.False
				r.Comment = fmt.Sprintf("Group %s is not present but gid %s is already taken by group %s", name, ordered.KeyString(gid), ordered.KeyString(gm.Value("name")))
				return r, nil
			}
		}
	}
	ok, err := c.Env.Run(ctx, "group.add", []any{name}, ordered.FromPairs("gid", gid, "system", c.Arg("system"), "non_unique", c.Arg("non_unique")))
	if err != nil {
		return nil, err
	}
	if !modules.Truthy(ok) {
		r.Result, r.Comment = states.False, fmt.Sprintf("Failed to create new group %s", name)
		return r, nil
	}
	members := ""
	if m, _ := strList(c.Arg("members")); len(m) > 0 {
		members = strings.Join(m, ",")
	}
	if a, _ := strList(c.Arg("addusers")); len(a) > 0 {
		members = strings.Join(a, ",")
	}
	if members != "" {
		if _, err := salt(ctx, c, "group.members", name, members); err != nil {
			return nil, err
		}
	}
	r.Comment = fmt.Sprintf("New group %s created", name)
	info, err := salt(ctx, c, "group.info", name)
	if err != nil {
		return nil, err
	}
	r.Changes, _ = info.(*ordered.Map)
	after, _, _, err := changes(ctx, c)
	if err != nil {
		return nil, err
	}
	if len(after) > 0 {
		r.Result = states.False
		r.Comment = fmt.Sprintf("Group %s has been created but, some changes could not be applied", name)
		r.Changes = ordered.FromPairs("Failed", changeMap(after))
	}
	return r, nil
}

// Absent is group.absent.
func Absent(ctx context.Context, c *states.Call) (*states.Result, error) {
	name := c.Str("name")
	r := states.NewResult(name, states.True, "")
	info, err := salt(ctx, c, "group.info", name)
	if err != nil {
		return nil, err
	}
	if m, _ := info.(*ordered.Map); m.Len() == 0 {
		r.Comment = "Group not present"
		return r, nil
	}
	if c.Env.Test {
		r.Result, r.Comment = states.None, fmt.Sprintf("Group %s is set for removal", name)
		return r, nil
	}
	ok, err := salt(ctx, c, "group.delete", name)
	if err != nil {
		return nil, err
	}
	if !modules.Truthy(ok) {
		r.Result, r.Comment = states.False, fmt.Sprintf("Failed to remove group %s", name)
		return r, nil
	}
	r.Changes = ordered.FromPairs(name, "")
	r.Comment = fmt.Sprintf("Removed group %s", name)
	return r, nil
}
