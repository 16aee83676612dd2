// Package group is Salt's `group` execution module for Linux
// (salt/modules/groupadd.py): groupadd, groupdel, groupmod and gpasswd
// run through an injectable syscmd.Runner, and the group database is read
// from <Root>/etc/group, as groupadd does when given a root.
//
// Not supported: NSS sources other than /etc/group (Salt's grp module
// sees LDAP groups too), and the RedHat 5, SUSE 11 and OpenBSD variants
// of adduser, deluser and members.
package group

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/modules/pkg/syscmd"
)

// Module is the group module bound to how it reaches the host.
type Module struct {
	Run   syscmd.Runner
	Which syscmd.LookPath
	// Root is where etc/group is read; "" means /.
	Root string
}

func init() { Register(modules.Default, &Module{Run: syscmd.Exec, Which: syscmd.Which}) }

// Entry is one line of /etc/group.
type Entry struct {
	Name    string
	Passwd  string
	GID     int
	Members []string
}

// Map renders e as groupadd._format_info.
func (e Entry) Map() *ordered.Map {
	mem := make([]any, len(e.Members))
	for i, m := range e.Members {
		mem[i] = m
	}
	return ordered.FromPairs("name", e.Name, "passwd", e.Passwd, "gid", e.GID, "members", mem)
}

// ReadGroups parses <root>/etc/group.
func ReadGroups(root string) ([]Entry, error) {
	if root == "" {
		root = "/"
	}
	f, err := os.Open(filepath.Join(root, "etc/group"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Entry
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		c := strings.Split(strings.TrimSpace(sc.Text()), ":")
		if len(c) < 4 || strings.HasPrefix(c[0], "#") {
			continue
		}
		gid, err := strconv.Atoi(c[2])
		if err != nil {
			continue
		}
		e := Entry{Name: c[0], Passwd: c[1], GID: gid, Members: []string{}}
		for _, m := range strings.Split(c[3], ",") {
			if m != "" {
				e.Members = append(e.Members, m)
			}
		}
		out = append(out, e)
	}
	return out, sc.Err()
}

// Lookup finds a group by name.
func Lookup(root, name string) (Entry, bool) {
	all, _ := ReadGroups(root)
	for _, e := range all {
		if e.Name == name {
			return e, true
		}
	}
	return Entry{}, false
}

func (m *Module) tool(name string) (string, error) {
	if m.Which != nil {
		if p := m.Which(name); p != "" {
			return p, nil
		}
	}
	return "", modules.Errorf("Command '%s' cannot be found", name)
}

// retcode runs a command and reports its exit status.
func (m *Module) retcode(ctx context.Context, args []string) (int, error) {
	r, err := m.Run(ctx, syscmd.Cmd{Args: args})
	if err != nil {
		return 0, modules.Errorf("run %s: %w", args[0], err)
	}
	return r.Retcode, nil
}

func opt(name string, def any) modules.Param {
	return modules.Param{Name: name, Optional: true, Default: def}
}

func str(v any) string {
	if v == nil {
		return ""
	}
	return ordered.KeyString(v)
}

// Register adds the group functions to r, bound to m.
func Register(r *modules.Registry, m *Module) {
	r.SetVirtual("group", func(env *modules.Env) (bool, string) {
		if k := kernel(env); k != "" && k != "Linux" {
			return false, "The groupadd execution module cannot be loaded:  only available on Linux, OpenBSD and NetBSD"
		}
		return true, ""
	})
	reg := func(name, doc string, params []modules.Param, fn modules.Func) {
		r.Register(modules.Function{Name: "group." + name, Doc: doc, Spec: modules.Spec{Params: params}, Fn: fn})
	}
	reg("add", "Add a group: groupadd [-g GID [-o]] [-r] NAME.",
		[]modules.Param{{Name: "name"}, opt("gid", nil), opt("system", false), opt("root", nil), opt("non_unique", false)}, m.add)
	reg("delete", "Remove a group with groupdel.", []modules.Param{{Name: "name"}, opt("root", nil)},
		func(ctx context.Context, c *modules.Call) (any, error) {
			gd, err := m.tool("groupdel")
			if err != nil {
				return nil, err
			}
			rc, err := m.retcode(ctx, withRoot([]string{gd}, "-R", c.Str("root"), c.Str("name")))
			return rc == 0, err
		})
	reg("info", "Return {name, passwd, gid, members} of a group, {} when it does not exist.",
		[]modules.Param{{Name: "name"}, opt("root", nil)}, func(_ context.Context, c *modules.Call) (any, error) {
			if e, ok := Lookup(m.root(c), c.Str("name")); ok {
				return e.Map(), nil
			}
			return ordered.New(), nil
		})
	reg("getent", "Return every group as group.info does.", []modules.Param{opt("refresh", false), opt("root", nil)},
		func(_ context.Context, c *modules.Call) (any, error) {
			all, err := ReadGroups(m.root(c))
			if err != nil {
				return nil, modules.Errorf("read groups: %w", err)
			}
			out := make([]any, len(all))
			for i, e := range all {
				out[i] = e.Map()
			}
			return out, nil
		})
	reg("chgid", "Change the gid of a group.", []modules.Param{{Name: "name"}, {Name: "gid"}, opt("root", nil), opt("non_unique", false)}, m.chgid)
	reg("adduser", "Add a user to a group with gpasswd --add.", []modules.Param{{Name: "name"}, {Name: "username"}, opt("root", nil)},
		m.gpasswd("--add"))
	reg("deluser", "Remove a user from a group with gpasswd --del.", []modules.Param{{Name: "name"}, {Name: "username"}, opt("root", nil)},
		m.deluser)
	reg("members", "Replace the members of a group (a comma-separated list) with gpasswd --members.",
		[]modules.Param{{Name: "name"}, {Name: "members_list"}, opt("root", nil)}, m.members)
}

func kernel(env *modules.Env) string {
	if env == nil || env.Grains() == nil {
		return ""
	}
	return str(env.Grains().Value("kernel"))
}

func (m *Module) root(c *modules.Call) string {
	if r := c.Str("root"); r != "" {
		return r
	}
	return m.Root
}

func withRoot(cmd []string, flag, root string, rest ...string) []string {
	if root != "" {
		cmd = append(cmd, flag, root)
	}
	return append(cmd, rest...)
}

// add is groupadd.add; like Salt it passes "-g GID" as one argument.
func (m *Module) add(ctx context.Context, c *modules.Call) (any, error) {
	ga, err := m.tool("groupadd")
	if err != nil {
		return nil, err
	}
	cmd := []string{ga}
	if gid := c.Arg("gid"); modules.Truthy(gid) {
		cmd = append(cmd, "-g "+str(gid))
		if c.Bool("non_unique") {
			cmd = append(cmd, "-o")
		}
	}
	if c.Bool("system") {
		cmd = append(cmd, "-r")
	}
	cmd = withRoot(cmd, "-R", c.Str("root"), c.Str("name"))
	rc, err := m.retcode(ctx, cmd)
	return rc == 0, err
}

func (m *Module) chgid(ctx context.Context, c *modules.Call) (any, error) {
	name := c.Str("name")
	pre, ok := Lookup(m.root(c), name)
	if !ok {
		return false, nil
	}
	if str(c.Arg("gid")) == strconv.Itoa(pre.GID) {
		return true, nil
	}
	gm, err := m.tool("groupmod")
	if err != nil {
		return nil, err
	}
	param := "-g"
	if c.Bool("non_unique") {
		param = "-og"
	}
	if _, err := m.retcode(ctx, withRoot([]string{gm}, "-R", c.Str("root"), param, str(c.Arg("gid")), name)); err != nil {
		return nil, err
	}
	post, _ := Lookup(m.root(c), name)
	return strconv.Itoa(post.GID) == str(c.Arg("gid")), nil
}

func (m *Module) gpasswd(flag string) modules.Func {
	return func(ctx context.Context, c *modules.Call) (any, error) {
		gp, err := m.tool("gpasswd")
		if err != nil {
			return nil, err
		}
		cmd := []string{gp, flag, c.Str("username"), c.Str("name")}
		rc, err := m.retcode(ctx, withRoot(cmd, "--root", c.Str("root")))
		return rc == 0, err
	}
}

// deluser only runs gpasswd when the user is a listed member.
func (m *Module) deluser(ctx context.Context, c *modules.Call) (any, error) {
	e, ok := Lookup(m.root(c), c.Str("name"))
	if !ok || !containsStr(e.Members, c.Str("username")) {
		return true, nil
	}
	return m.gpasswd("--del")(ctx, c)
}

func (m *Module) members(ctx context.Context, c *modules.Call) (any, error) {
	gp, err := m.tool("gpasswd")
	if err != nil {
		return nil, err
	}
	list := c.Arg("members_list")
	var s string
	if l, ok := list.([]any); ok {
		parts := make([]string, len(l))
		for i, x := range l {
			parts[i] = str(x)
		}
		s = strings.Join(parts, ",")
	} else {
		s = str(list)
	}
	rc, err := m.retcode(ctx, withRoot([]string{gp, "--members", s, c.Str("name")}, "--root", c.Str("root")))
	return rc == 0, err
}

func containsStr(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
