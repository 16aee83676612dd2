// Package teststate holds Salt's `test` state module (salt/states/test.py):
// states that succeed or fail on demand, for exercising requisites.
package teststate

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/states"
)

func init() { Register(states.Default) }

var (
	nameKw   = modules.Spec{Params: []modules.Param{{Name: "name"}}, VarKw: true}
	testMsgs = struct{ fail, succeedChanges, failChanges string }{
		"If we weren't testing, this would be a failure!",
		"If we weren't testing, this would be successful with changes",
		"If we weren't testing, this would be failed with changes",
	}
)

// Register adds the test state functions to r.
func Register(r *states.Registry) {
	r.Register(states.Function{Name: "test.nop", Spec: nameKw, Fn: succeedWithout})
	r.Register(states.Function{Name: "test.succeed_without_changes", Spec: nameKw, Fn: succeedWithout})
	r.Register(states.Function{Name: "test.fail_without_changes", Spec: nameKw, Fn: failWithout})
	r.Register(states.Function{Name: "test.succeed_with_changes", Spec: nameKw, Fn: succeedWith})
	r.Register(states.Function{Name: "test.fail_with_changes", Spec: nameKw, Fn: failWith})
	r.Register(states.Function{Name: "test.configurable_test_state", Spec: modules.Spec{Params: []modules.Param{
		{Name: "name"}, {Name: "changes", Optional: true, Default: true},
		{Name: "result", Optional: true, Default: true}, {Name: "comment", Optional: true, Default: ""},
		{Name: "warnings", Optional: true},
	}}, Fn: configurable})
	r.Register(states.Function{Name: "test.show_notification", Spec: modules.Spec{Params: []modules.Param{
		{Name: "name"}, {Name: "text", Optional: true},
	}, VarKw: true}, Fn: showNotification})
	r.Register(states.Function{Name: "test.mod_watch", Spec: modules.Spec{Params: []modules.Param{
		{Name: "name"}, {Name: "sfun", Optional: true},
	}, VarKw: true}, Fn: modWatch})
	r.Register(states.Function{Name: "test.check_pillar", Spec: modules.Spec{Params: []modules.Param{
		{Name: "name"}, {Name: "present", Optional: true}, {Name: "boolean", Optional: true},
		{Name: "integer", Optional: true}, {Name: "string", Optional: true},
		{Name: "listing", Optional: true}, {Name: "dictionary", Optional: true},
		{Name: "verbose", Optional: true, Default: false},
	}}, Fn: checkPillar})
}

func kwComment(c *states.Call, def string) string {
	if v, ok := c.Kw("comment"); ok {
		if s, ok := v.(string); ok {
			return s
		}
		return ordered.KeyString(v)
	}
	return def
}

func pretendChanges() *ordered.Map {
	return ordered.FromPairs("testing", ordered.FromPairs("old", "Unchanged", "new", "Something pretended to change"))
}

func succeedWithout(_ context.Context, c *states.Call) (*states.Result, error) {
	return states.NewResult(c.Arg("name"), states.True, kwComment(c, "Success!")), nil
}

func failWithout(_ context.Context, c *states.Call) (*states.Result, error) {
	r := states.NewResult(c.Arg("name"), states.False, kwComment(c, "Failure!"))
	if c.Env.Test {
		r.Comment = testMsgs.fail
	}
	return r, nil
}

func succeedWith(_ context.Context, c *states.Call) (*states.Result, error) {
	r := states.NewResult(c.Arg("name"), states.True, kwComment(c, "Success!"))
	r.Changes = pretendChanges()
	if c.Env.Test {
		r.Result, r.Comment = states.None, testMsgs.succeedChanges
	}
	return r, nil
}

func failWith(_ context.Context, c *states.Call) (*states.Result, error) {
	r := states.NewResult(c.Arg("name"), states.False, kwComment(c, "Failure!"))
	r.Changes = pretendChanges()
	if c.Env.Test {
		r.Result, r.Comment = states.None, testMsgs.failChanges
	}
	return r, nil
}

func isRandom(v any) bool {
	return strings.EqualFold(ordered.KeyString(v), "random")
}

func configurable(_ context.Context, c *states.Call) (*states.Result, error) {
	r := states.NewResult(c.Arg("name"), states.False, c.Str("comment"))
	changes := c.Arg("changes")
	switch {
	case changes == true:
		r.Changes = pretendChanges()
	case changes == false:
	case isRandom(changes):
		if rand.IntN(2) == 0 {
			r.Changes = pretendChanges()
		}
	default:
		return nil, modules.Invalidf("You have specified the state option 'changes' with invalid arguments. It must be either True, False, or 'Random'")
	}
	switch res := c.Arg("result").(type) {
	case bool:
		r.Result = states.TriOf(res)
	default:
		if !isRandom(res) {
			return nil, modules.Invalidf("You have specified the state option 'result' with invalid arguments. It must be either True, False, or 'Random'")
		}
		r.Result = states.TriOf(rand.IntN(2) == 0)
	}
	switch w := c.Arg("warnings").(type) {
	case nil:
	case string:
		r.Warnings = []any{w}
	case []any:
		r.Warnings = w
	default:
		return nil, modules.Invalidf("You have specified the state option 'warnings' with invalid arguments. It must be a string or a list of strings")
	}
	if c.Env.Test {
		r.Result = states.None
		if changes == false {
			r.Result = states.True
		}
		if r.Comment == "" {
			r.Comment = "This is a test"
		}
	}
	return r, nil
}

func showNotification(_ context.Context, c *states.Call) (*states.Result, error) {
	if !c.Bool("text") {
		return nil, modules.Invalidf("Missing required argument text.")
	}
	return states.NewResult(c.Arg("name"), states.True, c.Str("text")), nil
}

// modWatch lists the watched states that changed (salt/states/test.py mod_watch).
func modWatch(_ context.Context, c *states.Call) (*states.Result, error) {
	var changed []any
	for _, req := range c.Reqs["watch"] {
		tag := states.Tag(req)
		if ret, ok := c.Running(tag); ok && modules.Truthy(ret.Value("changes")) {
			changed = append(changed, fmt.Sprintf("%s: %s", ordered.KeyString(req.Value("state")), ordered.KeyString(req.Value("__id__"))))
		}
	}
	if changed == nil {
		changed = []any{}
	}
	r := states.NewResult(c.Arg("name"), states.True, kwComment(c, "Watch statement fired."))
	if v, ok := c.Kw("result"); ok {
		if b, ok := v.(bool); ok {
			r.Result = states.TriOf(b)
		} else if v == nil {
			r.Result = states.None
		}
	}
	if v, ok := c.Kw("changes"); ok {
		if m, ok := v.(*ordered.Map); ok {
			r.Changes = m
		}
	} else {
		r.Changes = ordered.FromPairs("Requisites with changes", changed)
	}
	return r, nil
}
