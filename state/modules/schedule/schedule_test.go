package schedule

import (
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
)

func TestList(t *testing.T) {
	for _, tc := range []struct {
		yaml bool
		want string
	}{{true, "schedule: {}\n"}, {false, "{}"}} {
		got, err := list(t.Context(), &modules.Call{Args: map[string]any{"return_yaml": tc.yaml}})
		if err != nil {
			t.Fatal(err)
		}
		s, ok := got.(string)
		if m, isMap := got.(*ordered.Map); isMap && m.Len() == 0 {
			s, ok = "{}", true
		}
		if !ok || s != tc.want {
			t.Errorf("return_yaml %v: %#v, want %q", tc.yaml, got, tc.want)
		}
	}
}
