package modulerun

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/keyword"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/states"
)

// env has a fresh registry with a few functions shaped like Salt's
// test module.
func env(test bool) *modules.Env {
	r := modules.NewRegistry()
	r.Register(modules.Function{Name: "test.ping", Fn: func(context.Context, *modules.Call) (any, error) { return true, nil }})
	r.Register(modules.Function{Name: "test.false", Fn: func(context.Context, *modules.Call) (any, error) { return false, nil }})
	r.Register(modules.Function{Name: "test.echo", Spec: modules.Spec{Params: []modules.Param{{Name: "text"}}},
		Fn: func(_ context.Context, c *modules.Call) (any, error) { return c.Arg("text"), nil }})
	r.Register(modules.Function{Name: "test.arg", Spec: modules.Spec{VarArgs: true, VarKw: true},
		Fn: func(_ context.Context, c *modules.Call) (any, error) {
			return ordered.FromPairs("args", append([]any{}, c.VarArgs...), "kwargs", c.Kwargs), nil
		}})
	r.Register(modules.Function{Name: "cmd.run_all", Spec: modules.Spec{Params: []modules.Param{{Name: "cmd"}}, VarKw: true},
		Fn: func(_ context.Context, c *modules.Call) (any, error) {
			return ordered.FromPairs("retcode", 2, "stdout", c.Arg("cmd")), nil
		}})
	r.Register(modules.Function{Name: "state.single", Spec: modules.Spec{Params: []modules.Param{{Name: "fun"}, {Name: "name"},
		{Name: "test", Optional: true}}}, Fn: func(_ context.Context, c *modules.Call) (any, error) {
		return c.Str("fun") + " " + c.Str("name"), nil
	}})
	return &modules.Env{Registry: r, Test: test, Context: map[string]any{}}
}

func apply(t *testing.T, e *modules.Env, kv ...any) *states.Result {
	t.Helper()
	r := states.NewRegistry()
	Register(r)
	f, _ := r.Lookup(e, "module.run")
	low := ordered.FromPairs(append([]any{"state", "module", "fun", "run", "__id__", "id"}, kv...)...)
	args, kwargs, err := f.Bind(low, keyword.Internal)
	if err != nil {
		t.Fatal(err)
	}
	res, err := f.Run(context.Background(), &states.Call{Env: e, Args: args, Kwargs: kwargs, Low: low})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestRun(t *testing.T) {
	tests := []struct {
		name    string
		test    bool
		low     []any
		result  states.Tri
		retName string
		comment string
		changes string
	}{
		{name: "new style", low: []any{"name", "id", "test.ping", []any{}},
			result: states.True, retName: `["test.ping"]`, comment: "test.ping: True", changes: `{"test.ping":true}`},
		{name: "new style with args and kwargs", low: []any{"name", "id", "test.arg", []any{"a", ordered.FromPairs("k", 1)}, "test.echo", []any{ordered.FromPairs("text", "hi")}},
			result: states.True, retName: `["test.arg","test.echo"]`,
			comment: "test.arg: Success, test.echo: hi",
			changes: `{"test.arg":{"args":["a"],"kwargs":{"k":1}},"test.echo":"hi"}`},
		{name: "new style failure", low: []any{"name", "id", "test.false", nil, "cmd.run_all", []any{"ls"}},
			result: states.False, retName: `["test.false","cmd.run_all"]`,
			comment: "'test.false': False, 'cmd.run_all' failed: (error message N/A)", changes: `{}`},
		{name: "new style bad arguments", low: []any{"name", "id", "test.echo", []any{}},
			result: states.False, retName: `["test.echo"]`,
			comment: "'test.echo' failed: Passed invalid arguments to test.echo: echo() missing 1 required positional argument: 'text'", changes: `{}`},
		{name: "new style unavailable", low: []any{"name", "id", "no.such", []any{}, "test.ping", nil},
			result: states.False, retName: `["no.such","test.ping"]`, comment: "Unavailable function: no.such.", changes: `{}`},
		{name: "new style test mode", test: true, low: []any{"name", "id", "test.ping", []any{}, "test.false", []any{}},
			result: states.None, retName: `["test.ping","test.false"]`, comment: "FunctionTrue test.ping, test.false to be executed.", changes: `{}`},
		{name: "legacy", low: []any{"name", "test.echo", "text", "hello"},
			result: states.True, retName: `"test.echo"`, comment: "Module function test.echo executed", changes: `{"ret":"hello"}`},
		{name: "legacy m_name and defaults", low: []any{"name", "state.single", "m_fun", "x", "m_name", "y"},
			result: states.True, retName: `"state.single"`, comment: "Module function state.single executed", changes: `{"ret":"x y"}`},
		{name: "legacy args and kwargs", low: []any{"name", "test.arg", "args", []any{1, 2}, "kwargs", ordered.FromPairs("a", "b")},
			result: states.True, retName: `"test.arg"`, comment: "Module function test.arg executed",
			changes: `{"ret":{"args":[1,2],"kwargs":{"a":"b"}}}`},
		{name: "legacy missing argument", low: []any{"name", "test.echo"},
			result: states.False, retName: `"test.echo"`, comment: "The following arguments are missing: text", changes: `{}`},
		{name: "legacy retcode fails", low: []any{"name", "cmd.run_all", "cmd", "false"},
			result: states.False, retName: `"cmd.run_all"`, comment: "Module function cmd.run_all executed",
			changes: `{"ret":{"retcode":2,"stdout":"false"}}`},
		{name: "legacy unavailable", low: []any{"name", "no.such"},
			result: states.False, retName: `"no.such"`, comment: "Module function no.such is not available", changes: `{}`},
		{name: "legacy test mode", test: true, low: []any{"name", "test.ping"},
			result: states.None, retName: `"test.ping"`, comment: "Module function test.ping is set to execute", changes: `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := apply(t, env(tt.test), tt.low...)
			if got.Result != tt.result || got.Comment != tt.comment || js(got.Name) != tt.retName || js(got.Changes) != tt.changes {
				t.Errorf("got %v %s %q %s\nwant %v %s %q %s", got.Result, js(got.Name), got.Comment, js(got.Changes),
					tt.result, tt.retName, tt.comment, tt.changes)
			}
		})
	}
}
