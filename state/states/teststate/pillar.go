package teststate

import (
	"context"
	"fmt"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/states"
)

// pillarKinds lists check_pillar's checks in Salt's order with the Python
// type name shown in failures.
var pillarKinds = []struct {
	arg, pyType string
	ok          func(any) bool
}{
	{"present", "", func(any) bool { return true }},
	{"boolean", "<class 'bool'>", func(v any) bool { _, ok := v.(bool); return ok }},
	{"integer", "<class 'int'>", func(v any) bool {
		switch v.(type) {
		case int, bool:
			return true
		}
		return false
	}},
	{"string", "(<class 'str'>,)", func(v any) bool { _, ok := v.(string); return ok }},
	{"listing", "<class 'list'>", func(v any) bool { _, ok := v.([]any); return ok }},
	{"dictionary", "<class 'dict'>", func(v any) bool { _, ok := v.(*ordered.Map); return ok }},
}

// pillarGet traverses pillar by a colon-delimited key (pillar.get).
func pillarGet(p *ordered.Map, key string) (any, bool) {
	var cur any = p
	for _, part := range strings.Split(key, ":") {
		m, ok := cur.(*ordered.Map)
		if !ok {
			return nil, false
		}
		if cur, ok = m.Get(part); !ok {
			return nil, false
		}
	}
	return cur, cur != nil
}

func checkPillar(_ context.Context, c *states.Call) (*states.Result, error) {
	given := false
	for _, k := range pillarKinds {
		given = given || c.Bool(k.arg)
	}
	if !given {
		return nil, modules.Invalidf("Missing required argument text.")
	}
	r := states.NewResult(c.Arg("name"), states.True, "")
	var fine []string
	for _, k := range pillarKinds {
		var keys []any
		switch v := c.Arg(k.arg).(type) {
		case nil:
		case string:
			keys = []any{v}
		case []any:
			keys = v
		default:
			return nil, fmt.Errorf("TypeError")
		}
		for _, key := range keys {
			ks := ordered.KeyString(key)
			v, ok := pillarGet(c.Env.Pillar, ks)
			switch {
			case !ok:
				r.Result = states.False
				r.Comment += fmt.Sprintf("Pillar key \"%s\" is missing.\n", ks)
			case !k.ok(v):
				r.Result = states.False
				r.Comment += fmt.Sprintf("Pillar key \"%s\" is not %s.\n", ks, k.pyType)
			case c.Bool("verbose"):
				t := k.pyType
				if t == "" {
					t = "None"
				}
				fine = append(fine, fmt.Sprintf("- %s (%s)\n", ks, t))
			}
		}
	}
	if len(fine) > 0 {
		r.Comment += "Those keys passed the check:\n" + strings.Join(fine, "")
	}
	return r, nil
}
