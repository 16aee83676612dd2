package compile

import (
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/internal/saltyaml"
)

func TestPadFuncs(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"a: wheel.key.accept\n", "{'a': {'wheel': ['key.accept']}}"},
		{"a: nodot\n", "{'a': 'nodot'}"},
		{"a:\n  local.state.apply:\n    - tgt: x\n", "{'a': {'local': [{'tgt': 'x'}, 'state.apply']}}"},
		{"a:\n  runner.b.c: []\n  runner.a.b: []\n", "{'a': {'runner.b.c': [], 'runner': ['a.b']}}"},
		{"a:\n  __sls__: x\n  _x.y: []\n  k.f: notalist\n", "{'a': {'__sls__': 'x', '_x.y': [], 'k.f': 'notalist'}}"},
	} {
		v, err := saltyaml.Load([]byte(tc.src), "t.sls")
		if err != nil {
			t.Fatal(err)
		}
		high := v.(*ordered.Map)
		PadFuncs(high)
		if got := py.Repr(high); got != tc.want {
			t.Errorf("PadFuncs(%q) = %s, want %s", tc.src, got, tc.want)
		}
	}
}
