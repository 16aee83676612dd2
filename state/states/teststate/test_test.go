package teststate

import (
	"context"
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/keyword"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/states"
)

func run(t *testing.T, fun string, test bool, low *ordered.Map) (*states.Result, error) {
	t.Helper()
	r := states.NewRegistry()
	Register(r)
	env := &modules.Env{Test: test, Pillar: ordered.FromPairs("a", ordered.FromPairs("b", 1))}
	f, reason := r.Lookup(env, fun)
	if f == nil {
		t.Fatal(reason)
	}
	args, kw, err := f.Bind(low, keyword.Internal)
	if err != nil {
		return nil, err
	}
	return f.Run(context.Background(), &states.Call{Env: env, Args: args, Kwargs: kw, Low: low,
		Running: func(string) (*ordered.Map, bool) {
			return ordered.FromPairs("changes", ordered.FromPairs("x", 1)), true
		},
		Reqs: map[string][]*ordered.Map{"watch": {ordered.FromPairs("state", "test", "__id__", "c", "name", "c", "fun", "nop")}}})
}

func TestStates(t *testing.T) {
	tests := []struct {
		fun     string
		test    bool
		low     *ordered.Map
		result  states.Tri
		comment string
		changed bool
	}{
		{"test.nop", false, ordered.FromPairs("name", "n"), states.True, "Success!", false},
		{"test.succeed_with_changes", false, ordered.FromPairs("name", "n"), states.True, "Success!", true},
		{"test.succeed_with_changes", true, ordered.FromPairs("name", "n"), states.None, "If we weren't testing, this would be successful with changes", true},
		{"test.fail_without_changes", true, ordered.FromPairs("name", "n"), states.False, "If we weren't testing, this would be a failure!", false},
		{"test.fail_with_changes", false, ordered.FromPairs("name", "n", "comment", "custom"), states.False, "custom", true},
		{"test.configurable_test_state", false, ordered.FromPairs("name", "n", "changes", false, "result", false), states.False, "", false},
		{"test.configurable_test_state", true, ordered.FromPairs("name", "n", "changes", false), states.True, "This is a test", false},
		{"test.show_notification", false, ordered.FromPairs("name", "n", "text", "hello"), states.True, "hello", false},
		{"test.mod_watch", false, ordered.FromPairs("name", "n", "sfun", "nop"), states.True, "Watch statement fired.", true},
		{"test.check_pillar", false, ordered.FromPairs("name", "n", "dictionary", "a", "integer", []any{"a:b", "missing"}), states.False, "Pillar key \"missing\" is missing.\n", false},
	}
	for _, tc := range tests {
		t.Run(tc.fun, func(t *testing.T) {
			res, err := run(t, tc.fun, tc.test, tc.low)
			if err != nil {
				t.Fatal(err)
			}
			if res.Result != tc.result || res.Comment != tc.comment || (res.Changes.Len() > 0) != tc.changed {
				b, _ := res.Changes.MarshalJSON()
				t.Errorf("%s = %v %q %s", tc.fun, res.Result.Value(), res.Comment, b)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	if _, err := run(t, "test.configurable_test_state", false, ordered.FromPairs("name", "n", "bogus", 1)); err == nil ||
		err.Error() != "'bogus' is an invalid keyword argument for 'test.configurable_test_state'" {
		t.Errorf("unknown keyword: %v", err)
	}
	if _, err := run(t, "test.show_notification", false, ordered.FromPairs("name", "n")); err == nil {
		t.Error("show_notification without text must fail")
	}
	if _, err := run(t, "test.configurable_test_state", false, ordered.FromPairs("name", "n", "changes", "maybe")); err == nil {
		t.Error("configurable_test_state with changes=maybe must fail")
	}
}
