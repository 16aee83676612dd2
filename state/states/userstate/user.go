// Package userstate is Salt's `user` state module (salt/states/user.py) for
// Linux: present (uid, gid, usergroup, groups, optional_groups,
// remove_groups, home, createhome, shell, unique, system, the GECOS
// fields, password hashes with enforce_password and empty_password,
// allow_uid_change, allow_gid_change) and absent (purge, force).
//
// Not supported: hash_password (a clear-text password is refused rather
// than hashed), password_lock, the shadow ageing fields (date, mindays,
// maxdays, inactdays, warndays, expire), loginclass and the Windows
// fields; groups sharing one gid are not deduplicated as Salt does.
package userstate

import (
	"context"
	"fmt"
	"os"
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

// Register adds the user state functions to r.
func Register(r *states.Registry) {
	var params []modules.Param
	params = append(params, modules.Param{Name: "name"})
	for _, p := range []struct {
		name string
		def  any
	}{
		{"uid", nil}, {"gid", nil}, {"usergroup", nil}, {"groups", nil}, {"optional_groups", nil}, {"remove_groups", true},
		{"home", nil}, {"createhome", true}, {"persist_home", false}, {"password", nil}, {"hash_password", false},
		{"enforce_password", true}, {"empty_password", false}, {"shell", nil}, {"unique", true}, {"system", false},
		{"fullname", nil}, {"roomnumber", nil}, {"workphone", nil}, {"homephone", nil}, {"other", nil}, {"loginclass", nil},
		{"date", nil}, {"mindays", nil}, {"maxdays", nil}, {"inactdays", nil}, {"warndays", nil}, {"expire", nil},
		{"win_homedrive", nil}, {"win_profile", nil}, {"win_logonscript", nil}, {"win_description", nil},
		{"nologinit", false}, {"allow_uid_change", false}, {"allow_gid_change", false}, {"password_lock", nil},
	} {
		params = append(params, opt(p.name, p.def))
	}
	r.Register(states.Function{Name: "user.present", Spec: modules.Spec{Params: params}, Fn: Present})
	r.Register(states.Function{Name: "user.absent", Spec: modules.Spec{Params: []modules.Param{{Name: "name"},
		opt("purge", false), opt("force", false)}}, Fn: Absent})
}

func call(ctx context.Context, c *states.Call, fun string, args []any, kw ...any) (any, error) {
	return c.Env.Run(ctx, fun, args, ordered.FromPairs(kw...))
}

func info(ctx context.Context, c *states.Call, fun, name string) (*ordered.Map, error) {
	v, err := call(ctx, c, fun, []any{name})
	if err != nil {
		return nil, err
	}
	m, _ := v.(*ordered.Map)
	if m == nil {
		m = ordered.New()
	}
	return m, nil
}

func strList(v any) []string {
	switch x := v.(type) {
	case nil:
		return nil
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			out = append(out, ordered.KeyString(e))
		}
		return out
	case string:
		if x == "" {
			return nil
		}
		return strings.Split(x, ",")
	}
	return []string{ordered.KeyString(v)}
}

func str(v any) string {
	if v == nil {
		return ""
	}
	return ordered.KeyString(v)
}

const redacted = "XXX-REDACTED-XXX"

// Present is user.present.
func Present(ctx context.Context, c *states.Call) (*states.Result, error) {
	name := c.Str("name")
	r := states.NewResult(name, states.True, fmt.Sprintf("User %s is present and up to date", name))
	if c.Arg("password") != nil && c.Bool("hash_password") {
		r.Result, r.Comment = states.False, "hash_password is not supported: give the password as a hash"
		return r, nil
	}
	for _, k := range []string{"fullname", "roomnumber", "workphone"} {
		if v, ok := c.Arg(k).(string); ok && strings.Contains(v, ",") {
			r.Result, r.Comment = states.False, fmt.Sprintf("Unsupported char ',' in %s", v)
			return r, nil
		}
	}
	groups := strList(c.Arg("groups"))
	var missing []string
	for _, g := range groups {
		if gi, err := info(ctx, c, "group.info", g); err != nil {
			return nil, err
		} else if gi.Len() == 0 {
			missing = append(missing, g)
		}
	}
	if len(missing) > 0 {
		r.Result, r.Comment = states.False, "The following group(s) are not present: "+strings.Join(missing, ",")
		return r, nil
	}
	var optGroups []string
	for _, g := range strList(c.Arg("optional_groups")) {
		if gi, err := info(ctx, c, "group.info", g); err != nil {
			return nil, err
		} else if gi.Len() > 0 {
			optGroups = append(optGroups, g)
		}
	}
	d := &desired{c: c, name: name, groups: groups, hasGroups: c.Arg("groups") != nil, optGroups: optGroups, gid: c.Arg("gid")}
	if c.Bool("usergroup") {
		if gid, _ := groupToGID(ctx, c, name); gid != "" {
			d.gid = name
		}
	}
	chs, exists, err := d.changes(ctx, c.Bool("allow_uid_change"), c.Bool("allow_gid_change"))
	if err != nil {
		r.Result, r.Comment = states.False, err.Error()
		return r, nil
	}
	if !exists {
		return create(ctx, c, r, groups, optGroups)
	}
	if chs.Len() == 0 {
		return r, nil
	}
	if c.Env.Test {
		r.Result = states.None
		r.Comment = "The following user attributes are set to be changed:\n"
		chs.Range(func(k, v any) bool {
			if k == "passwd" {
				v = redacted
			}
			r.Comment += fmt.Sprintf("%s: %s\n", str(k), py.Str(v))
			return true
		})
		return r, nil
	}
	return update(ctx, c, r, d, chs)
}

// groupToGID is file.group_to_gid: a number stays as it is, a name is
// looked up, "" when unknown.
func groupToGID(ctx context.Context, c *states.Call, group any) (string, error) {
	switch group.(type) {
	case nil:
		return "", nil
	case int:
		return str(group), nil
	}
	gi, err := info(ctx, c, "group.info", str(group))
	if err != nil || gi.Len() == 0 {
		return "", err
	}
	return str(gi.Value("gid")), nil
}

// gidToGroup is file.gid_to_group: the name of a gid, the gid itself
// when no group has it.
func gidToGroup(ctx context.Context, c *states.Call, gid any) (string, error) {
	n, err := strconv.Atoi(str(gid))
	if err != nil {
		g, err := groupToGID(ctx, c, gid)
		if err != nil || g == "" {
			return "", err
		}
		n, _ = strconv.Atoi(g)
	}
	all, err := call(ctx, c, "group.getent", nil)
	if err != nil {
		return "", err
	}
	l, _ := all.([]any)
	for _, g := range l {
		if gm, ok := g.(*ordered.Map); ok && gm.Value("gid") == n {
			return str(gm.Value("name")), nil
		}
	}
	return strconv.Itoa(n), nil
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
