package run_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
)

// TestSlots fills state arguments from execution functions when the
// state runs: a whole string argument, a path into the result, text
// appended to a string result, values inside a list and a mapping, and
// a slot that is not for execution modules, left as it is (the cases
// of Salt's tests/pytests/unit/state/test_state_format_slots.py).
func TestSlots(t *testing.T) {
	r := runner(false)
	r.Env.Registry.Register(modules.Function{Name: "data.get", Spec: modules.Spec{Params: []modules.Param{{Name: "key"}}, VarKw: true},
		Fn: func(_ context.Context, c *modules.Call) (any, error) {
			if c.Str("key") == "nested" {
				return ordered.FromPairs("a", ordered.FromPairs("b", []any{"zero", "one"})), nil
			}
			return "value of " + c.Str("key"), nil
		}})
	sls := `whole:
  test.show_notification:
    - text: __slot__:salt:data.get(key=x)
path:
  test.show_notification:
    - text: __slot__:salt:data.get(nested).a.b.1
appended:
  test.show_notification:
    - text: "__slot__:salt:data.get(nested).a.b.0 ~ /tail~"
quoted:
  test.show_notification:
    - text: "__slot__:salt:data.get('with space')"
no_path_append:
  test.show_notification:
    - text: "__slot__:salt:data.get(x) ~ /tail"
other:
  test.show_notification:
    - text: __slot__:pillar:x
unknown:
  test.show_notification:
    - text: __slot__:salt:nope.nope()
`
	res, err := r.CallHigh(context.Background(), high(t, sls))
	if err != nil {
		t.Fatalf("CallHigh: %v", err)
	}
	var got []string
	res.Map().Range(func(k, v any) bool {
		got = append(got, line(k.(string), v.(*ordered.Map)))
		return true
	})
	want := []string{
		"whole.show_notification true value of x",
		"path.show_notification true one",
		"appended.show_notification true zero/tail~",
		"quoted.show_notification true value of with space",
		// Salt reads the " " after ")" as a path and fails on it.
		`no_path_append.show_notification false An exception occurred in this state: Traceback (most recent call last): File "<brine>", in call Exception: slot __slot__:salt:data.get(x) ~ /tail: no '.' before the path into the result`,
		"other.show_notification true __slot__:pillar:x",
		"unknown.show_notification true __slot__:salt:nope.nope()",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}
