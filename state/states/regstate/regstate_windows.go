package regstate

import (
	"context"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/modules/reg"
	"github.com/brinesalt/brine/state/states"
)

func req(name string) modules.Param { return modules.Param{Name: name} }

func opt(name string, def any) modules.Param {
	return modules.Param{Name: name, Default: def, Optional: true}
}

func init() {
	states.Register(states.Function{Name: "reg.present", Fn: present, Spec: modules.Spec{Params: []modules.Param{
		req("name"), opt("vname", nil), opt("vdata", nil), opt("vtype", "REG_SZ"), opt("use_32bit_registry", false),
		opt("win_owner", nil), opt("win_perms", nil), opt("win_deny_perms", nil), opt("win_inheritance", true),
		opt("win_perms_reset", false)}}})
	states.Register(states.Function{Name: "reg.absent", Fn: absent, Spec: modules.Spec{Params: []modules.Param{
		req("name"), opt("vname", nil), opt("use_32bit_registry", false)}}})
	states.Register(states.Function{Name: "reg.key_absent", Fn: keyAbsent, Spec: modules.Spec{Params: []modules.Param{
		req("name"), opt("use_32bit_registry", false)}}})
}

func wow(c *states.Call) uint32 {
	if c.Bool("use_32bit_registry") {
		return 0x0200 // KEY_WOW64_32KEY
	}
	return 0
}

func vnamePtr(c *states.Call) *string {
	if c.Arg("vname") == nil {
		return nil
	}
	s := c.Str("vname")
	return &s
}

func entry(c *states.Call) string {
	if v := c.Str("vname"); v != "" {
		return v
	}
	return "(Default)"
}

// dacl reports the win_* permission options this minion cannot apply.
func dacl(c *states.Call) string {
	for _, k := range []string{"win_owner", "win_perms", "win_deny_perms"} {
		if c.Arg(k) != nil {
			return k + " is not supported by this minion yet (salt.utils.win_dacl)"
		}
	}
	if c.Arg("win_inheritance") != true || c.Bool("win_perms_reset") {
		return "win_inheritance and win_perms_reset are not supported by this minion yet (salt.utils.win_dacl)"
	}
	return ""
}

func present(_ context.Context, c *states.Call) (*states.Result, error) {
	name := c.Str("name")
	r := states.NewResult(name, states.True, "")
	if msg := dacl(c); msg != "" {
		r.Result, r.Comment = states.False, msg
		return r, nil
	}
	hive, key := reg.ParseKey(name)
	cur, err := reg.ReadValue(hive, key, vnamePtr(c), wow(c))
	if err != nil {
		return nil, err
	}
	want, err := reg.CastVdata(c.Arg("vdata"), c.Str("vtype"))
	if err != nil {
		return nil, err
	}
	if reg.Equal(want, cur.Value("vdata")) && cur.Value("success") == true {
		r.Comment = entry(c) + " in " + name + " is already present"
		return r, nil
	}
	change := ordered.FromPairs("Key", hive+`\`+key, "Entry", entry(c), "Value", want, "Owner", nil,
		"Perms", ordered.FromPairs("Grant", nil, "Deny", nil), "Inheritance", true)
	vname := c.Str("vname")
	if c.Env.Test {
		r.Result = states.None
		r.Changes.Set("reg", ordered.FromPairs("Will add", change))
		r.Comment = "Will add " + pyNone(c.Arg("vname"), vname) + " to " + hive + `\` + key
		return r, nil
	}
	ok, err := reg.SetValue(hive, key, vname, c.Arg("vdata"), c.Str("vtype"), wow(c), false)
	if err != nil {
		return nil, err
	}
	if !ok {
		r.Result = states.False
		r.Comment = "Failed to add " + pyNone(c.Arg("vname"), vname) + " to " + hive + `\` + key
		return r, nil
	}
	r.Changes.Set("reg", ordered.FromPairs("Added", change))
	r.Comment = "Added " + pyNone(c.Arg("vname"), vname) + " to " + hive + `\` + key
	return r, nil
}

// pyNone is how Salt's f-strings print an unset vname: None.
func pyNone(v any, s string) string {
	if v == nil {
		return "None"
	}
	return s
}

func absent(_ context.Context, c *states.Call) (*states.Result, error) {
	name := c.Str("name")
	r := states.NewResult(name, states.True, "")
	hive, key := reg.ParseKey(name)
	cur, err := reg.ReadValue(hive, key, vnamePtr(c), wow(c))
	if err != nil {
		return nil, err
	}
	if cur.Value("success") != true || cur.Value("vdata") == "(value not set)" {
		r.Comment = name + " is already absent"
		return r, nil
	}
	change := ordered.FromPairs("Key", hive+`\`+key, "Entry", entry(c))
	if c.Env.Test {
		r.Result = states.None
		r.Changes.Set("reg", ordered.FromPairs("Will remove", change))
		r.Comment = "Will remove " + pyNone(c.Arg("vname"), c.Str("vname")) + " to " + hive + `\` + key
		return r, nil
	}
	ok, err := reg.DeleteValue(hive, key, c.Str("vname"), wow(c))
	if err != nil {
		return nil, err
	}
	if ok != true {
		r.Result = states.False
		r.Comment = "Failed to remove " + key + " from " + hive
		return r, nil
	}
	r.Changes.Set("reg", ordered.FromPairs("Removed", change))
	r.Comment = "Removed " + key + " from " + hive
	return r, nil
}

func keyAbsent(_ context.Context, c *states.Call) (*states.Result, error) {
	name := c.Str("name")
	r := states.NewResult(name, states.True, "")
	hive, key := reg.ParseKey(name)
	cur, err := reg.ReadValue(hive, key, nil, wow(c))
	if err != nil {
		return nil, err
	}
	if cur.Value("success") != true {
		r.Comment = name + " is already absent"
		return r, nil
	}
	if c.Env.Test {
		r.Result = states.None
		r.Changes.Set("reg", ordered.FromPairs("Will remove", ordered.FromPairs("Key", hive+`\`+key)))
		r.Comment = "Will remove " + hive + `\` + key
		return r, nil
	}
	if _, err := reg.DeleteKeyRecursive(hive, key, wow(c)); err != nil {
		return nil, err
	}
	after, err := reg.ReadValue(hive, key, nil, wow(c))
	if err != nil {
		return nil, err
	}
	if after.Value("success") == true {
		r.Result = states.False
		r.Comment = "Failed to remove registry key " + name
		return r, nil
	}
	r.Changes.Set("reg", ordered.FromPairs("Removed", ordered.FromPairs("Key", hive+`\`+key)))
	r.Comment = "Removed " + hive + `\` + key
	return r, nil
}
