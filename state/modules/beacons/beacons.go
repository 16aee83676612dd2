// Package beacons is Salt's beacons execution module
// (salt/modules/beacons.py): list, list_available, add, modify, delete,
// enable, disable, enable_beacon, disable_beacon, save and reset, with
// Salt's return shapes. Salt's functions ask the running minion over
// its event bus (manage_beacons); here they reach the minion's beacons
// through modules.Env.Minion (beacons.Provider). Without a running
// minion (salt-call beside none) there are no beacons to list and the
// changes fail with Salt's "Event module not available" comments.
//
// Not here: reload (Salt's reads a file nothing writes).
package beacons

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/brinesalt/brine/internal/beacons"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/saltyaml"
	"github.com/brinesalt/brine/state/modules"
)

func init() {
	kw := func(params ...modules.Param) modules.Spec { return modules.Spec{Params: params, VarKw: true} }
	name := modules.Param{Name: "name"}
	data := modules.Param{Name: "beacon_data"}
	yaml := modules.Param{Name: "return_yaml", Default: true, Optional: true}
	for _, f := range []modules.Function{
		{Name: "beacons.list", Doc: "List the beacons configured on the minion (Salt's YAML text with return_yaml, the default).",
			Spec: kw(yaml, modules.Param{Name: "include_pillar", Default: true, Optional: true}, modules.Param{Name: "include_opts", Default: true, Optional: true}), Fn: list},
		{Name: "beacons.list_available", Doc: "List the beacon modules the minion can load.", Spec: kw(yaml), Fn: listAvailable},
		{Name: "beacons.add", Doc: "Add a beacon: name and its configuration (a list of dicts).", Spec: kw(name, data), Fn: add},
		{Name: "beacons.modify", Doc: "Replace a beacon's configuration.", Spec: kw(name, data), Fn: modify},
		{Name: "beacons.delete", Doc: "Delete a beacon.", Spec: kw(name), Fn: del},
		{Name: "beacons.save", Doc: "Save the configured beacons (not the pillar's) to minion.d/beacons.conf.", Spec: kw(), Fn: save},
		{Name: "beacons.enable", Doc: "Enable all beacons on the minion.", Spec: kw(), Fn: func(_ context.Context, c *modules.Call) (any, error) { return setAll(c, true), nil }},
		{Name: "beacons.disable", Doc: "Disable all beacons on the minion.", Spec: kw(), Fn: func(_ context.Context, c *modules.Call) (any, error) { return setAll(c, false), nil }},
		{Name: "beacons.enable_beacon", Doc: "Enable one beacon.", Spec: kw(name), Fn: func(_ context.Context, c *modules.Call) (any, error) { return setOne(c, true), nil }},
		{Name: "beacons.disable_beacon", Doc: "Disable one beacon.", Spec: kw(name), Fn: func(_ context.Context, c *modules.Call) (any, error) { return setOne(c, false), nil }},
		{Name: "beacons.reset", Doc: "Remove the beacons of the minion configuration.", Spec: kw(), Fn: reset},
	} {
		modules.Register(f)
	}
}

func manager(c *modules.Call) *beacons.Manager {
	if c.Env == nil {
		return nil
	}
	if p, ok := c.Env.Minion.(beacons.Provider); ok {
		return p.Beacons()
	}
	return nil
}

func isTest(c *modules.Call) bool { return modules.Truthy(c.Kwargs.Value("test")) }

func current(c *modules.Call, includePillar, includeOpts bool) *ordered.Map {
	m := manager(c)
	if m == nil {
		return ordered.New()
	}
	switch {
	case includePillar && includeOpts:
		return m.List(beacons.All)
	case includePillar:
		return m.List(beacons.Pillar)
	case includeOpts:
		return m.List(beacons.Opts)
	}
	return ordered.New()
}

func dump(key string, v any) (string, error) {
	return saltyaml.Dump(ordered.FromPairs(key, v), saltyaml.DumpOptions{SortKeys: true})
}

func list(_ context.Context, c *modules.Call) (any, error) {
	b := current(c, c.Bool("include_pillar"), c.Bool("include_opts"))
	if c.Bool("return_yaml") {
		return dump("beacons", b)
	}
	return b, nil
}

func listAvailable(_ context.Context, c *modules.Call) (any, error) {
	names := make([]any, 0)
	for _, n := range beacons.Available() {
		names = append(names, n)
	}
	if c.Bool("return_yaml") {
		return dump("beacons", names)
	}
	return names, nil
}

// moduleOf is the beacon_module item of a beacon's data, or name.
func moduleOf(name string, data any) string {
	if l, ok := data.([]any); ok {
		for _, item := range l {
			if m, ok := item.(*ordered.Map); ok {
				if s, ok := m.Value("beacon_module").(string); ok {
					return s
				}
			}
		}
	}
	return name
}

func add(_ context.Context, c *modules.Call) (any, error) {
	name := c.Str("name")
	data := c.Arg("beacon_data")
	ret := ordered.FromPairs("comment", fmt.Sprintf("Failed to add beacon %s.", name), "result", false)
	if current(c, true, true).Has(name) {
		ret.Set("comment", fmt.Sprintf("Beacon %s is already configured.", name))
		ret.Set("result", true)
		return ret, nil
	}
	mod := moduleOf(name, data)
	avail := false
	for _, n := range beacons.Available() {
		avail = avail || n == mod
	}
	if !avail {
		ret.Set("comment", fmt.Sprintf(`Beacon "%s" is not available.`, mod))
		return ret, nil
	}
	if isTest(c) {
		ret.Set("result", true)
		ret.Set("comment", fmt.Sprintf("Beacon: %s would be added.", name))
		return ret, nil
	}
	m := manager(c)
	if m == nil {
		ret.Set("comment", "Event module not available. Beacon validation failed.")
		return ret, nil
	}
	if ok, why := m.Validate(name, data); !ok {
		ret.Set("comment", fmt.Sprintf("Beacon %s configuration invalid, not adding.\n%s", name, why))
		return ret, nil
	}
	if ok, why := m.Add(name, data); !ok {
		ret.Set("comment", why)
		return ret, nil
	}
	ret.Set("result", true)
	ret.Set("comment", fmt.Sprintf("Added beacon: %s.", name))
	return ret, nil
}

// lines is the key:value text Salt's modify diffs.
func lines(data any) []string {
	var out []string
	l, _ := data.([]any)
	for _, item := range l {
		if m, ok := item.(*ordered.Map); ok {
			m.Range(func(k, v any) bool {
				out = append(out, fmt.Sprintf("%s:%s\n", ordered.KeyString(k), pyStr(v)))
				return true
			})
		}
	}
	return out
}

func pyStr(v any) string {
	s, err := saltyaml.EncodeScalar(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return s
}

func modify(_ context.Context, c *modules.Call) (any, error) {
	name := c.Str("name")
	data := c.Arg("beacon_data")
	ret := ordered.FromPairs("comment", "", "result", true)
	cur := current(c, true, true)
	if !cur.Has(name) {
		ret.Set("comment", fmt.Sprintf("Beacon %s is not configured.", name))
		return ret, nil
	}
	if isTest(c) {
		ret.Set("comment", fmt.Sprintf("Beacon: %s would be modified.", name))
		return ret, nil
	}
	m := manager(c)
	if ok, why := m.Validate(name, data); !ok {
		ret.Set("result", false)
		ret.Set("comment", fmt.Sprintf("Beacon %s configuration invalid, not modifying.\n%s", name, why))
		return ret, nil
	}
	if ordered.Equal(cur.Value(name), data) {
		ret.Set("comment", fmt.Sprintf("Job %s in correct state", name))
		return ret, nil
	}
	ret.Set("changes", ordered.FromPairs("diff", unifiedDiff(lines(cur.Value(name)), lines(data))))
	if ok, why := m.Modify(name, data); !ok {
		ret.Set("result", false)
		ret.Set("comment", why)
		return ret, nil
	}
	ret.Set("comment", fmt.Sprintf("Modified beacon: %s.", name))
	return ret, nil
}

// unifiedDiff is difflib.unified_diff for these short lists: one hunk
// with the old lines removed and the new ones added (common leading and
// trailing lines kept as context).
func unifiedDiff(a, b []string) string {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	if pre == len(a) && pre == len(b) {
		return ""
	}
	var sb strings.Builder
	sb.WriteString("--- \n+++ \n")
	fmt.Fprintf(&sb, "@@ -%s +%s @@\n", hunkRange(1, len(a)), hunkRange(1, len(b)))
	for _, l := range a[:pre] {
		sb.WriteString(" " + l)
	}
	for _, l := range a[pre : len(a)-suf] {
		sb.WriteString("-" + l)
	}
	for _, l := range b[pre : len(b)-suf] {
		sb.WriteString("+" + l)
	}
	for _, l := range a[len(a)-suf:] {
		sb.WriteString(" " + l)
	}
	return sb.String()
}

func hunkRange(start, n int) string {
	switch n {
	case 1:
		return fmt.Sprint(start)
	case 0:
		return fmt.Sprintf("%d,0", start-1)
	}
	return fmt.Sprintf("%d,%d", start, n)
}

func del(_ context.Context, c *modules.Call) (any, error) {
	name := c.Str("name")
	ret := ordered.FromPairs("comment", fmt.Sprintf("Failed to delete beacon %s.", name), "result", false)
	if isTest(c) {
		ret.Set("result", true)
		ret.Set("comment", fmt.Sprintf("Beacon: %s would be deleted.", name))
		return ret, nil
	}
	m := manager(c)
	if m == nil {
		ret.Set("comment", "Event module not available. Beacon delete failed.")
		return ret, nil
	}
	if ok, why := m.Delete(name); !ok {
		ret.Set("comment", why)
		return ret, nil
	}
	if !m.List(beacons.All).Has(name) {
		ret.Set("result", true)
		ret.Set("comment", fmt.Sprintf("Deleted beacon: %s.", name))
	}
	return ret, nil
}

func save(_ context.Context, c *modules.Call) (any, error) {
	ret := ordered.FromPairs("comment", []any{}, "result", true)
	confFile, _ := c.Env.Opts.Value("conf_file").(string)
	include, _ := c.Env.Opts.Value("default_include").(string)
	if include == "" {
		include = "minion.d/*.conf"
	}
	sfn := beacons.ConfFile(filepath.Dir(confFile), include)
	if err := beacons.Save(sfn, current(c, false, true)); err != nil {
		ret.Set("comment", fmt.Sprintf("Unable to write to beacons file at %s. Check permissions.", sfn))
		ret.Set("result", false)
		return ret, nil
	}
	ret.Set("comment", fmt.Sprintf("Beacons saved to %s.", sfn))
	return ret, nil
}

func setAll(c *modules.Call, on bool) *ordered.Map {
	verb, past := "enable", "Enabled"
	if !on {
		verb, past = "disable", "Disabled"
	}
	ret := ordered.FromPairs("comment", []any{}, "result", true)
	if isTest(c) {
		ret.Set("comment", fmt.Sprintf("Beacons would be %sd.", verb))
		return ret
	}
	m := manager(c)
	if m == nil {
		ret.Set("result", false)
		ret.Set("comment", fmt.Sprintf("Event module not available. Beacons %s job failed.", verb))
		return ret
	}
	m.SetEnabled(on)
	if v, ok := m.Enabled(); !ok || v != on {
		ret.Set("result", false)
		ret.Set("comment", fmt.Sprintf("Failed to %s beacons on minion.", verb))
		return ret
	}
	ret.Set("comment", fmt.Sprintf("%s beacons on minion.", past))
	return ret
}

func setOne(c *modules.Call, on bool) *ordered.Map {
	name := c.Str("name")
	past := "Enabled"
	if !on {
		past = "Disabled"
	}
	ret := ordered.FromPairs("comment", []any{}, "result", true)
	if name == "" {
		ret.Set("comment", "Beacon name is required.")
		ret.Set("result", false)
		return ret
	}
	if isTest(c) {
		if on {
			ret.Set("comment", fmt.Sprintf("Beacon %s would be enabled.", name))
		} else {
			// Salt's disable_beacon says this whatever the name.
			ret.Set("comment", "Beacons would be disabled.")
		}
		return ret
	}
	m := manager(c)
	if m == nil || !m.List(beacons.All).Has(name) {
		ret.Set("comment", fmt.Sprintf("Beacon %s is not currently configured.", name))
		ret.Set("result", false)
		return ret
	}
	if ok, why := m.SetBeaconEnabled(name, on); !ok {
		ret.Set("result", false)
		ret.Set("comment", why)
		return ret
	}
	if v, ok := m.BeaconEnabled(name); ok && v == on {
		ret.Set("comment", fmt.Sprintf("%s beacon %s on minion.", past, name))
		return ret
	}
	ret.Set("result", false)
	if on {
		ret.Set("comment", fmt.Sprintf("Failed to enable beacon %s on minion.", name))
	} else {
		ret.Set("comment", "Failed to disable beacon on minion.")
	}
	return ret
}

func reset(_ context.Context, c *modules.Call) (any, error) {
	ret := ordered.FromPairs("comment", []any{}, "result", true)
	if isTest(c) {
		ret.Set("comment", "Beacons would be reset.")
		return ret, nil
	}
	m := manager(c)
	if m == nil {
		ret.Set("result", false)
		ret.Set("comment", "Event module not available. Beacons reset job failed.")
		return ret, nil
	}
	m.Reset()
	ret.Set("comment", "Beacon configuration reset.")
	return ret, nil
}
