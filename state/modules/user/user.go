// Package user is Salt's `user` execution module for Linux
// (salt/modules/useradd.py) together with the part of `shadow`
// (salt/modules/linux_shadow.py) that the user state needs: info,
// default_hash, set_password and del_password. useradd, userdel, usermod
// and passwd run through an injectable syscmd.Runner; the account
// databases are read from <Root>/etc/passwd, /etc/group and /etc/shadow.
//
// shadow.set_password rewrites <Root>/etc/shadow itself, as Salt does
// unless use_usermod, but atomically and under shadow-utils' lock.
//
// Differences from Salt: only the files are read, not other NSS sources;
// hash_password and the shadow.set_* ageing functions are not provided.
package user

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/modules/group"
	"github.com/brinesalt/brine/state/modules/pkg/syscmd"
)

// Module is the user module bound to how it reaches the host.
type Module struct {
	Run   syscmd.Runner
	Which syscmd.LookPath
	// Root is where etc/passwd, etc/group and etc/shadow are read and
	// written; "" means /.
	Root string
	// Now is the clock for the shadow file's date of last change; nil
	// means time.Now.
	Now func() time.Time
}

func init() { Register(modules.Default, &Module{Run: syscmd.Exec, Which: syscmd.Which}) }

// Passwd is one line of /etc/passwd.
type Passwd struct {
	Name, Passwd string
	UID, GID     int
	Gecos        string
	Home, Shell  string
}

func (m *Module) root(c *modules.Call) string {
	if c != nil {
		if r := c.Str("root"); r != "" {
			return r
		}
	}
	if m.Root == "" {
		return "/"
	}
	return m.Root
}

// ReadPasswd parses <root>/etc/passwd.
func ReadPasswd(root string) ([]Passwd, error) {
	f, err := os.Open(filepath.Join(root, "etc/passwd"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Passwd
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		c := strings.Split(strings.TrimSpace(sc.Text()), ":")
		if len(c) < 7 {
			continue
		}
		uid, err1 := strconv.Atoi(c[2])
		gid, err2 := strconv.Atoi(c[3])
		if err1 != nil || err2 != nil {
			continue
		}
		out = append(out, Passwd{Name: c[0], Passwd: c[1], UID: uid, GID: gid, Gecos: c[4], Home: c[5], Shell: c[6]})
	}
	return out, sc.Err()
}

func lookup(root, name string) (Passwd, bool) {
	all, _ := ReadPasswd(root)
	for _, p := range all {
		if p.Name == name {
			return p, true
		}
	}
	return Passwd{}, false
}

// groupList is salt.utils.user.get_group_list: the sorted names of the
// groups the user is in, the primary one included.
func groupList(root string, p Passwd) []string {
	all, _ := group.ReadGroups(root)
	seen := map[string]bool{}
	for _, g := range all {
		if g.GID == p.GID {
			seen[g.Name] = true
			continue
		}
		for _, mem := range g.Members {
			if mem == p.Name {
				seen[g.Name] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for g := range seen {
		out = append(out, g)
	}
	sort.Strings(out)
	return out
}

// gecos splits the GECOS field into its five parts.
func gecos(s string) [5]string {
	var out [5]string
	for i, part := range strings.SplitN(s, ",", 5) {
		out[i] = part
	}
	return out
}

// format is useradd._format_info.
func format(root string, p Passwd) *ordered.Map {
	g := gecos(p.Gecos)
	groups := []any{}
	for _, n := range groupList(root, p) {
		groups = append(groups, n)
	}
	return ordered.FromPairs("gid", p.GID, "groups", groups, "home", p.Home, "name", p.Name, "passwd", p.Passwd,
		"shell", p.Shell, "uid", p.UID, "fullname", g[0], "roomnumber", g[1], "workphone", g[2], "homephone", g[3], "other", g[4])
}

func (m *Module) tool(name string) (string, error) {
	if m.Which != nil {
		if p := m.Which(name); p != "" {
			return p, nil
		}
	}
	return "", modules.Errorf("Command '%s' cannot be found", name)
}

func (m *Module) run(ctx context.Context, args []string) (syscmd.Result, error) {
	r, err := m.Run(ctx, syscmd.Cmd{Args: args})
	if err != nil {
		return r, modules.Errorf("run %s: %w", args[0], err)
	}
	return r, nil
}

func str(v any) string {
	if v == nil {
		return ""
	}
	return ordered.KeyString(v)
}

func kernel(env *modules.Env) string {
	if env == nil || env.Grains() == nil {
		return ""
	}
	return str(env.Grains().Value("kernel"))
}
