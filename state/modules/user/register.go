package user

import (
	"context"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
)

func opt(name string, def any) modules.Param {
	return modules.Param{Name: name, Optional: true, Default: def}
}

func p(name string) modules.Param { return modules.Param{Name: name} }

// Register adds the user functions, and the shadow functions the user
// state needs, to r bound to m.
func Register(r *modules.Registry, m *Module) {
	linux := func(env *modules.Env) (bool, string) {
		if k := kernel(env); k != "" && k != "Linux" {
			return false, "useradd execution module not loaded: either pwd python library not available or system not one of Linux, OpenBSD, NetBSD or AIX"
		}
		return true, ""
	}
	r.SetVirtual("user", linux)
	r.SetVirtual("shadow", linux)
	reg := func(name, doc string, params []modules.Param, fn modules.Func) {
		r.Register(modules.Function{Name: name, Doc: doc, Spec: modules.Spec{Params: params}, Fn: fn})
	}
	reg("user.add", "Add a user with useradd, then set groups and GECOS fields.",
		[]modules.Param{p("name"), opt("uid", nil), opt("gid", nil), opt("groups", nil), opt("home", nil), opt("shell", nil),
			opt("unique", true), opt("system", false), opt("fullname", ""), opt("roomnumber", ""), opt("workphone", ""),
			opt("homephone", ""), opt("other", ""), opt("createhome", true), opt("loginclass", nil), opt("nologinit", false),
			opt("root", nil), opt("usergroup", nil)}, m.add)
	reg("user.delete", "Remove a user with userdel [-r] [-f].", []modules.Param{p("name"), opt("remove", false), opt("force", false), opt("root", nil)}, m.delete)
	reg("user.info", "Return a user's passwd entry and groups, {} when there is no such user.",
		[]modules.Param{p("name"), opt("root", nil)}, func(_ context.Context, c *modules.Call) (any, error) {
			root := m.root(c)
			if u, ok := lookup(root, c.Str("name")); ok {
				return format(root, u), nil
			}
			return ordered.New(), nil
		})
	reg("user.getent", "Return every user as user.info does.", []modules.Param{opt("refresh", false), opt("root", nil)},
		func(_ context.Context, c *modules.Call) (any, error) {
			root := m.root(c)
			all, err := ReadPasswd(root)
			if err != nil {
				return nil, modules.Errorf("read users: %w", err)
			}
			out := make([]any, len(all))
			for i, u := range all {
				out[i] = format(root, u)
			}
			return out, nil
		})
	reg("user.list_users", "Return the sorted user names.", []modules.Param{opt("root", nil)},
		func(_ context.Context, c *modules.Call) (any, error) {
			all, err := ReadPasswd(m.root(c))
			if err != nil {
				return nil, modules.Errorf("read users: %w", err)
			}
			names := make([]string, len(all))
			for i, u := range all {
				names[i] = u.Name
			}
			return sortedAny(names), nil
		})
	reg("user.list_groups", "Return the sorted groups of a user.", []modules.Param{p("name")},
		func(_ context.Context, c *modules.Call) (any, error) {
			root := m.root(c)
			u, ok := lookup(root, c.Str("name"))
			if !ok {
				return []any{}, nil
			}
			return sortedAny(groupList(root, u)), nil
		})
	reg("user.primary_group", "Return the name of a user's primary group.", []modules.Param{p("name")},
		func(ctx context.Context, c *modules.Call) (any, error) {
			r, err := m.run(ctx, []string{"id", "-g", "-n", c.Str("name")})
			return r.Stdout, err
		})
	for _, a := range []struct{ fun, key, flag string }{
		{"chuid", "uid", "-u"}, {"chgid", "gid", "-g"}, {"chshell", "shell", "-s"},
	} {
		reg("user."+a.fun, "Change the user's "+a.key+" with usermod "+a.flag+".", []modules.Param{p("name"), p(a.key), opt("root", nil)},
			m.chattrib(a.key, a.flag))
	}
	reg("user.chhome", "Change the user's home with usermod -d (and -m with persist=True).",
		[]modules.Param{p("name"), p("home"), opt("persist", false), opt("root", nil)}, m.chattrib("home", "-d"))
	reg("user.chgroups", "Set the user's supplementary groups with usermod -G (-a to append).",
		[]modules.Param{p("name"), p("groups"), opt("append", false), opt("root", nil)}, m.chgroups)
	for i, key := range gecosKeys {
		reg("user.ch"+key, "Change the "+key+" part of the user's GECOS field.", []modules.Param{p("name"), p(key), opt("root", nil)},
			m.chgecos(i, key))
	}
	reg("shadow.info", "Return a user's shadow entry.", []modules.Param{p("name"), opt("root", nil)},
		func(_ context.Context, c *modules.Call) (any, error) {
			return shadowInfo(m.root(c), c.Str("name")), nil
		})
	reg("shadow.default_hash", "Return the hash of an unset password.", nil,
		func(context.Context, *modules.Call) (any, error) { return "!", nil })
	reg("shadow.set_password", "Set a user's password hash in the shadow file (with usermod -p when use_usermod=True).",
		[]modules.Param{p("name"), p("password"), opt("use_usermod", false), opt("root", nil)}, m.setPassword)
	reg("shadow.del_password", "Delete a user's password with passwd -d.", []modules.Param{p("name"), opt("root", nil)},
		func(ctx context.Context, c *modules.Call) (any, error) {
			cmd := []string{"passwd", "-d"}
			if r := c.Str("root"); r != "" {
				cmd = append(cmd, "-R", r)
			}
			if _, err := m.run(ctx, append(cmd, c.Str("name"))); err != nil {
				return nil, err
			}
			return shadowInfo(m.root(c), c.Str("name")).Value("passwd") == "", nil
		})
}

var gecosKeys = []string{"fullname", "roomnumber", "workphone", "homephone", "other"}

func sortedAny(l []string) []any {
	out := make([]any, len(l))
	sortStrings(l)
	for i, s := range l {
		out[i] = s
	}
	return out
}

// add is useradd.add.
func (m *Module) add(ctx context.Context, c *modules.Call) (any, error) {
	ua, err := m.tool("useradd")
	if err != nil {
		return nil, err
	}
	name := c.Str("name")
	cmd := []string{ua}
	if sh := c.Str("shell"); sh != "" {
		cmd = append(cmd, "-s", sh)
	}
	if uid := c.Str("uid"); uid != "" {
		cmd = append(cmd, "-u", uid)
	}
	groups := strList(c.Arg("groups"))
	if gid := c.Str("gid"); gid != "" {
		cmd = append(cmd, "-g", gid)
	} else if c.Bool("usergroup") {
		cmd = append(cmd, "-U")
	} else if c.Arg("groups") != nil && containsStr(groups, name) && userGroupsEnab(m.root(c)) {
		if g, ok := groupGID(m.root(c), name); ok {
			cmd = append(cmd, "-g", g)
		}
	}
	if v := c.Arg("usergroup"); v == false {
		cmd = append(cmd, "-N")
	}
	if c.Bool("createhome") {
		cmd = append(cmd, "-m")
	} else {
		cmd = append(cmd, "-M")
	}
	if c.Bool("nologinit") {
		cmd = append(cmd, "-l")
	}
	if home := c.Arg("home"); home != nil {
		cmd = append(cmd, "-d", str(home))
	}
	if !c.Bool("unique") {
		cmd = append(cmd, "-o")
	}
	if c.Bool("system") {
		cmd = append(cmd, "-r")
	}
	cmd = append(cmd, name)
	if r := c.Str("root"); r != "" {
		cmd = append(cmd, "-R", r)
	}
	r, err := m.run(ctx, cmd)
	if err != nil {
		return nil, err
	}
	if r.Retcode != 0 {
		return false, nil
	}
	if len(groups) > 0 {
		if _, err := m.setGroups(ctx, c, name, groups, false); err != nil {
			return nil, err
		}
	}
	for i, key := range gecosKeys {
		if v := c.Str(key); v != "" {
			if _, err := m.updateGecos(ctx, c, name, i, v); err != nil {
				return nil, err
			}
		}
	}
	return true, nil
}

// delete is useradd.delete; exit status 12 on Debian only means the mail
// spool was missing.
func (m *Module) delete(ctx context.Context, c *modules.Call) (any, error) {
	ud, err := m.tool("userdel")
	if err != nil {
		return nil, err
	}
	cmd := []string{ud}
	if c.Bool("remove") {
		cmd = append(cmd, "-r")
	}
	if c.Bool("force") {
		cmd = append(cmd, "-f")
	}
	cmd = append(cmd, c.Str("name"))
	if r := c.Str("root"); r != "" {
		cmd = append(cmd, "-R", r)
	}
	r, err := m.run(ctx, cmd)
	if err != nil {
		return nil, err
	}
	switch {
	case r.Retcode == 0:
		return true, nil
	case r.Retcode == 12 && str(c.Env.Grains().Value("os_family")) == "Debian" &&
		(strings.Contains(r.Stderr, "var/mail") || strings.Contains(r.Stderr, "var/spool/mail")):
		return true, nil
	}
	return false, nil
}

func strList(v any) []string {
	switch x := v.(type) {
	case nil:
		return nil
	case string:
		if x == "" {
			return nil
		}
		return strings.Split(x, ",")
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			out = append(out, str(e))
		}
		return out
	}
	return []string{str(v)}
}

func containsStr(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
