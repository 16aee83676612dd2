package roster

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
)

// Inventory is an Ansible inventory as `ansible-inventory --list` sees
// it: groups with hosts, child groups and variables, and hosts with their
// own variables. Every group is a descendant of "all"; a host in no
// other group is in "ungrouped".
type Inventory struct {
	File   string
	groups map[string]*invGroup
	gorder []string
	hosts  map[string]*invHost
	horder []string
}

type invGroup struct {
	name     string
	line     int
	hosts    []string
	children []string
	parents  []string
	vars     *ordered.Map
	fileVars *ordered.Map // from group_vars/<name>
}

type invHost struct {
	name     string
	line     int
	groups   []string
	vars     *ordered.Map
	fileVars *ordered.Map // from host_vars/<name>
}

// maxInventoryHosts bounds host range expansion (web[0:99999999]).
const maxInventoryHosts = 100000

func newInventory(file string) *Inventory {
	inv := &Inventory{File: file, groups: map[string]*invGroup{}, hosts: map[string]*invHost{}}
	inv.group("all", 0)
	inv.group("ungrouped", 0)
	return inv
}

// group returns the named group, creating it.
func (inv *Inventory) group(name string, line int) *invGroup {
	if g, ok := inv.groups[name]; ok {
		return g
	}
	g := &invGroup{name: name, line: line, vars: ordered.New(), fileVars: ordered.New()}
	inv.groups[name] = g
	inv.gorder = append(inv.gorder, name)
	return g
}

// addHost puts host in group (creating both) and sets its variables.
func (inv *Inventory) addHost(group, name string, line int, vars *ordered.Map) error {
	h, ok := inv.hosts[name]
	if !ok {
		if len(inv.hosts) >= maxInventoryHosts {
			return fmt.Errorf("more than %d hosts", maxInventoryHosts)
		}
		h = &invHost{name: name, line: line, vars: ordered.New(), fileVars: ordered.New()}
		inv.hosts[name] = h
		inv.horder = append(inv.horder, name)
	}
	g := inv.group(group, line)
	if !slices.Contains(g.hosts, name) {
		g.hosts = append(g.hosts, name)
		h.groups = append(h.groups, group)
	}
	vars.Range(func(k, v any) bool { h.vars.Set(k, v); return true })
	return nil
}

// addChild makes child a child group of parent, refusing loops as
// Ansible does ("creates a recursive dependency loop").
func (inv *Inventory) addChild(parent, child string, line int) error {
	if parent == child || inv.isAncestor(child, parent) {
		return fmt.Errorf("adding group %q as child to %q creates a recursive dependency loop", child, parent)
	}
	p, c := inv.group(parent, line), inv.group(child, line)
	if !slices.Contains(p.children, child) {
		p.children = append(p.children, child)
		c.parents = append(c.parents, parent)
	}
	return nil
}

// isAncestor reports whether a is b or one of b's ancestors.
func (inv *Inventory) isAncestor(a, b string) bool {
	seen := map[string]bool{}
	var walk func(string) bool
	walk = func(n string) bool {
		if n == a {
			return true
		}
		if seen[n] {
			return false
		}
		seen[n] = true
		g := inv.groups[n]
		if g == nil {
			return false
		}
		return slices.ContainsFunc(g.parents, walk)
	}
	return walk(b)
}

// finish is Ansible's reconcile_inventory: top-level groups become
// children of all, hosts in no group but all go to ungrouped.
func (inv *Inventory) finish() {
	for _, n := range inv.gorder {
		g := inv.groups[n]
		if n != "all" && len(g.parents) == 0 {
			_ = inv.addChild("all", n, g.line)
		}
	}
	ug := inv.groups["ungrouped"]
	for _, n := range inv.horder {
		h := inv.hosts[n]
		other := slices.ContainsFunc(h.groups, func(g string) bool { return g != "all" && g != "ungrouped" })
		if !other && !slices.Contains(ug.hosts, n) {
			ug.hosts = append(ug.hosts, n)
			h.groups = append(h.groups, "ungrouped")
		}
		if other && slices.Contains(ug.hosts, n) {
			ug.hosts = slices.DeleteFunc(ug.hosts, func(s string) bool { return s == n })
			h.groups = slices.DeleteFunc(h.groups, func(s string) bool { return s == "ungrouped" })
		}
	}
}

// Groups returns the group names, in the order the inventory declares
// them ("all" and "ungrouped" first).
func (inv *Inventory) Groups() []string { return slices.Clone(inv.gorder) }

// Hosts returns the hosts of group and of its descendants, in inventory
// order; "all" is every host. An unknown group has none.
func (inv *Inventory) Hosts(group string) []string {
	if _, ok := inv.groups[group]; !ok {
		return nil
	}
	in := map[string]bool{}
	seen := map[string]bool{}
	var walk func(string)
	walk = func(n string) {
		if seen[n] {
			return
		}
		seen[n] = true
		g := inv.groups[n]
		for _, h := range g.hosts {
			in[h] = true
		}
		for _, c := range g.children {
			walk(c)
		}
	}
	walk(group)
	var out []string
	for _, h := range inv.horder {
		if group == "all" || in[h] {
			out = append(out, h)
		}
	}
	return out
}

// HostVars returns host's variables as Ansible combines them
// (lib/ansible/vars/manager.py, inventory/helpers.py sort_groups): the
// inventory vars of all its groups and their ancestors, shallowest
// first, then by ansible_group_priority and name, each replacing earlier
// keys; then the group_vars files of those groups in the same order;
// then the host's inventory vars, then its host_vars file.
func (inv *Inventory) HostVars(host string) *ordered.Map {
	h, ok := inv.hosts[host]
	out := ordered.New()
	if !ok {
		return out
	}
	anc := map[string]bool{}
	var up func(string)
	up = func(n string) {
		if anc[n] {
			return
		}
		anc[n] = true
		for _, p := range inv.groups[n].parents {
			up(p)
		}
	}
	for _, g := range h.groups {
		up(g)
	}
	anc["all"] = true
	groups := make([]string, 0, len(anc))
	for g := range anc {
		groups = append(groups, g)
	}
	depth := inv.depths()
	slices.SortFunc(groups, func(a, b string) int {
		if d := depth[a] - depth[b]; d != 0 {
			return d
		}
		if p := inv.priority(a) - inv.priority(b); p != 0 {
			return p
		}
		return strings.Compare(a, b)
	})
	set := func(k, v any) bool { out.Set(k, v); return true }
	for _, g := range groups {
		inv.groups[g].vars.Range(set)
	}
	for _, g := range groups {
		inv.groups[g].fileVars.Range(set)
	}
	h.vars.Range(set)
	h.fileVars.Range(set)
	return out
}

// depths is each group's depth: all is 0, a child one more than its
// deepest parent.
func (inv *Inventory) depths() map[string]int {
	d := map[string]int{}
	var depth func(string, int) int
	depth = func(n string, guard int) int {
		if v, ok := d[n]; ok {
			return v
		}
		best := 0
		if guard < len(inv.groups) {
			for _, p := range inv.groups[n].parents {
				best = max(best, depth(p, guard+1)+1)
			}
		}
		d[n] = best
		return best
	}
	for _, n := range inv.gorder {
		depth(n, 0)
	}
	return d
}

// priority is ansible_group_priority, default 1.
func (inv *Inventory) priority(group string) int {
	switch x := inv.groups[group].vars.Value("ansible_group_priority").(type) {
	case int:
		return x
	case string:
		if n, err := strconv.Atoi(x); err == nil {
			return n
		}
	}
	return 1
}

// expandHostRange expands Ansible host ranges (lib/ansible/inventory/
// helpers.py expand_hostname_range): web[01:03] is web01 web02 web03,
// db-[a:c] is db-a db-b db-c, [0:10:5] steps by 5, and several ranges
// multiply. Leading zeros set the width, and then begin and end must have
// the same length.
func expandHostRange(pat string, limit int) ([]string, error) {
	open := strings.IndexByte(pat, '[')
	if open < 0 {
		return []string{pat}, nil
	}
	closing := strings.IndexByte(pat[open:], ']')
	if closing < 0 || !strings.Contains(pat[open:open+closing], ":") {
		return []string{pat}, nil
	}
	head, rng, tail := pat[:open], pat[open+1:open+closing], pat[open+closing+1:]
	seq, err := rangeSeq(rng, limit)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, s := range seq {
		more, err := expandHostRange(head+s+tail, limit-len(out))
		if err != nil {
			return nil, err
		}
		out = append(out, more...)
		if len(out) > limit {
			return nil, fmt.Errorf("host range %q expands to more than %d hosts", pat, maxInventoryHosts)
		}
	}
	return out, nil
}

const asciiLetters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

// rangeSeq expands the inside of one [begin:end(:step)].
func rangeSeq(rng string, limit int) ([]string, error) {
	b := strings.Split(rng, ":")
	if len(b) != 2 && len(b) != 3 {
		return nil, fmt.Errorf("host range %q must be begin:end or begin:end:step", rng)
	}
	beg, end, step := b[0], b[1], "1"
	if len(b) == 3 {
		step = b[2]
	}
	if beg == "" {
		beg = "0"
	}
	if end == "" {
		return nil, fmt.Errorf("host range %q must specify an end value", rng)
	}
	width := 0
	if beg[0] == '0' && len(beg) > 1 {
		if len(beg) != len(end) {
			return nil, fmt.Errorf("host range %q must specify equal-length begin and end formats", rng)
		}
		width = len(beg)
	}
	if len(beg) == 1 && len(end) == 1 && strings.Contains(asciiLetters, beg) && strings.Contains(asciiLetters, end) {
		i, j := strings.Index(asciiLetters, beg), strings.Index(asciiLetters, end)
		if i > j {
			return nil, fmt.Errorf("host range %q must have begin <= end", rng)
		}
		return strings.Split(asciiLetters[i:j+1], ""), nil
	}
	lo, err1 := strconv.Atoi(beg)
	hi, err2 := strconv.Atoi(end)
	st, err3 := strconv.Atoi(step)
	if err1 != nil || err2 != nil || err3 != nil || st <= 0 {
		return nil, fmt.Errorf("host range %q is not numeric or alphabetic", rng)
	}
	if hi >= lo && (hi-lo)/st >= limit {
		return nil, fmt.Errorf("host range %q expands to more than %d hosts", rng, maxInventoryHosts)
	}
	var out []string
	for n := lo; n <= hi; n += st {
		s := strconv.Itoa(n)
		if width > len(s) {
			s = strings.Repeat("0", width-len(s)) + s
		}
		out = append(out, s)
	}
	return out, nil
}

// splitHostPort is Ansible's parse_address for inventory host patterns:
// "host:22", "[::1]:22", or a bare name or address (an IPv6 address
// without brackets has no port). Brackets holding a range
// ("web[1:3]:22") are part of the name.
func splitHostPort(s string) (host string, port int, err error) {
	if strings.HasPrefix(s, "[") {
		if i := strings.LastIndex(s, "]:"); i > 0 && strings.Count(s[1:i], ":") >= 2 {
			p, perr := strconv.Atoi(s[i+2:])
			if perr != nil {
				return "", 0, fmt.Errorf("invalid port in %q", s)
			}
			return s[1:i], p, nil
		}
	}
	i := strings.LastIndexByte(s, ':')
	if i < 0 || outsideBrackets(s[:i], ':') {
		return s, 0, nil
	}
	if i == len(s)-1 {
		return "", 0, fmt.Errorf("invalid host pattern %q: trailing colon", s)
	}
	p, perr := strconv.Atoi(s[i+1:])
	if perr != nil || p < 0 {
		if strings.Contains(s[i:], "]") {
			return s, 0, nil // the colon is inside a range
		}
		return "", 0, fmt.Errorf("invalid port in %q", s)
	}
	return s[:i], p, nil
}

// outsideBrackets reports whether c occurs in s outside [...].
func outsideBrackets(s string, c byte) bool {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[':
			depth++
		case ']':
			depth--
		case c:
			if depth <= 0 {
				return true
			}
		}
	}
	return false
}
