package user

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/modules/group"
)

func sortStrings(l []string) { sort.Strings(l) }

// chattrib is useradd._chattrib: usermod only when the value differs,
// then whether info shows the new value.
func (m *Module) chattrib(key, flag string) modules.Func {
	return func(ctx context.Context, c *modules.Call) (any, error) {
		name, val := c.Str("name"), c.Str(key)
		root := m.root(c)
		pre, ok := lookup(root, name)
		if !ok {
			return nil, modules.Errorf("User '%s' does not exist", name)
		}
		if str(format(root, pre).Value(key)) == val {
			return true, nil
		}
		um, err := m.tool("usermod")
		if err != nil {
			return nil, err
		}
		cmd := []string{um}
		if r := c.Str("root"); r != "" {
			cmd = append(cmd, "-R", r)
		}
		if c.Bool("persist") {
			cmd = append(cmd, "-m")
		}
		if _, err := m.run(ctx, append(cmd, flag, val, name)); err != nil {
			return nil, err
		}
		post, _ := lookup(root, name)
		return str(format(root, post).Value(key)) == val, nil
	}
}

func (m *Module) chgroups(ctx context.Context, c *modules.Call) (any, error) {
	return m.setGroups(ctx, c, c.Str("name"), strList(c.Arg("groups")), c.Bool("append"))
}

// setGroups is useradd.chgroups: usermod [-a] -G g1,g2 NAME, falling
// back to gpasswd -a per group when usermod cannot find a group in
// /etc/group (an NSS-only group).
func (m *Module) setGroups(ctx context.Context, c *modules.Call, name string, groups []string, appendG bool) (bool, error) {
	root := m.root(c)
	if u, ok := lookup(root, name); ok {
		cur := groupList(root, u)
		if sameSet(cur, groups) {
			return true, nil
		}
	}
	um, err := m.tool("usermod")
	if err != nil {
		return false, err
	}
	cmd := []string{um}
	if appendG {
		cmd = append(cmd, "-a")
	}
	cmd = append(cmd, "-G", strings.Join(groups, ","), name)
	if r := c.Str("root"); r != "" {
		cmd = append(cmd, "-R", r)
	}
	r, err := m.run(ctx, cmd)
	if err != nil {
		return false, err
	}
	if r.Retcode != 0 && strings.Contains(r.Stderr, "not found in") {
		ok := true
		for _, g := range groups {
			r, err := m.run(ctx, []string{"gpasswd", "-a", name, g})
			if err != nil {
				return false, err
			}
			ok = ok && r.Retcode == 0
		}
		return ok, nil
	}
	return r.Retcode == 0, nil
}

func sameSet(a, b []string) bool {
	set := map[string]bool{}
	for _, x := range a {
		set[x] = true
	}
	other := map[string]bool{}
	for _, x := range b {
		other[x] = true
		if !set[x] {
			return false
		}
	}
	return len(set) == len(other)
}

func (m *Module) chgecos(i int, key string) modules.Func {
	return func(ctx context.Context, c *modules.Call) (any, error) {
		return m.updateGecos(ctx, c, c.Str("name"), i, c.Str(key))
	}
}

// updateGecos is useradd._update_gecos: usermod -c with the rebuilt
// five-part field, trailing commas dropped.
func (m *Module) updateGecos(ctx context.Context, c *modules.Call, name string, i int, val string) (bool, error) {
	root := m.root(c)
	pre, ok := lookup(root, name)
	if !ok {
		return false, nil
	}
	g := gecos(pre.Gecos)
	if g[i] == val {
		return true, nil
	}
	g[i] = val
	um, err := m.tool("usermod")
	if err != nil {
		return false, err
	}
	cmd := []string{um}
	if r := c.Str("root"); r != "" {
		cmd = append(cmd, "-R", r)
	}
	if _, err := m.run(ctx, append(cmd, "-c", strings.TrimRight(strings.Join(g[:], ","), ","), name)); err != nil {
		return false, err
	}
	post, _ := lookup(root, name)
	return gecos(post.Gecos)[i] == val, nil
}

// userGroupsEnab reads USERGROUPS_ENAB from /etc/login.defs.
func userGroupsEnab(root string) bool {
	f, err := os.Open(filepath.Join(root, "etc/login.defs"))
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if len(line) > 15 {
			line15 := line[:15]
			if strings.Contains(line15, "USERGROUPS_ENAB") {
				return strings.Contains(line, "yes")
			}
		} else if strings.Contains(line, "USERGROUPS_ENAB") {
			return strings.Contains(line, "yes")
		}
	}
	return false
}

func groupGID(root, name string) (string, bool) {
	g, ok := group.Lookup(root, name)
	if !ok {
		return "", false
	}
	return strconv.Itoa(g.GID), true
}

// shadowInfo is linux_shadow.info: the shadow fields of a user, all ""
// when there is no entry.
func shadowInfo(root, name string) *ordered.Map {
	return parseShadow(filepath.Join(root, "etc/shadow"), name)
}

// parseShadow is linux_shadow._getspnam on the shadow file path.
func parseShadow(path, name string) *ordered.Map {
	empty := ordered.FromPairs("name", "", "passwd", "", "lstchg", "", "min", "", "max", "", "warn", "", "inact", "", "expire", "")
	f, err := os.Open(path)
	if err != nil {
		return empty
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		c := strings.Split(strings.TrimSpace(sc.Text()), ":")
		if len(c) < 9 || c[0] != name {
			continue
		}
		num := func(s string) any {
			if n, err := strconv.Atoi(s); err == nil {
				return n
			}
			return -1
		}
		return ordered.FromPairs("name", c[0], "passwd", c[1], "lstchg", num(c[2]), "min", num(c[3]), "max", num(c[4]),
			"warn", num(c[5]), "inact", num(c[6]), "expire", num(c[7]))
	}
	return empty
}
