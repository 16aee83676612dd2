package master

import (
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/saltyaml"
)

// FuzzPeerArgs feeds a minion's publish arguments through parse_input:
// the keywords always end up in one trailing __kwarg__ mapping.
func FuzzPeerArgs(f *testing.F) {
	for _, s := range []string{"a", "k=v", "{x: 1}", "[1, 2]", "a=b=c", "==", "_x.y-z=1", "None"} {
		f.Add(s, "k=2")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		out := parseInput([]any{a, ordered.FromPairs("__kwarg__", true, "z", 1), b, 3}, []string{"k"})
		for i, x := range out {
			if d, ok := x.(*ordered.Map); ok && d.Value("__kwarg__") == true && i != len(out)-1 {
				t.Fatalf("a keyword mapping before the end: %v", out)
			}
		}
		pos, kw := saltyaml.SplitKwargs(out)
		if !kw.Has("z") || len(pos) == 0 || pos[len(pos)-1] != 3 {
			t.Fatalf("parse_input lost arguments: %v", out)
		}
	})
}
