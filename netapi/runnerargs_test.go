package netapi

import (
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
)

// TestRunnerArgs: the three styles RunnerClient._reformat_low accepts
// (salt/runner.py's docstring), and all of them at once.
func TestRunnerArgs(t *testing.T) {
	for _, tc := range []struct {
		name  string
		chunk *ordered.Map
		pos   []any
		kw    *ordered.Map
	}{
		{"old style", ordered.FromPairs("client", "runner", "fun", "jobs.lookup_jid", "jid", "1234"),
			[]any{}, ordered.FromPairs("jid", "1234")},
		{"new style (pepper)", ordered.FromPairs("client", "runner", "fun", "jobs.lookup_jid", "kwarg", ordered.FromPairs("jid", "1234")),
			[]any{}, ordered.FromPairs("jid", "1234")},
		{"CLI style", ordered.FromPairs("client", "runner", "fun", "jobs.lookup_jid", "arg", []any{"jid=1234", "x", 3}),
			[]any{"x", 3}, ordered.FromPairs("jid", 1234)},
		{"__kwarg__ dict", ordered.FromPairs("fun", "f", "arg", []any{ordered.FromPairs("__kwarg__", true, "a", 1), ordered.FromPairs("b", 2)}),
			[]any{ordered.FromPairs("b", 2)}, ordered.FromPairs("a", 1)},
		{"all at once, later wins", ordered.FromPairs("fun", "f", "arg", []any{"a=1"}, "kwarg", ordered.FromPairs("a", 2, "b", 2), "b", 3, "token", "t"),
			[]any{}, ordered.FromPairs("a", 2, "b", 3)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pos, kw := runnerArgs(tc.chunk)
			if !ordered.Equal(tc.pos, pos) {
				t.Errorf("positional: got %v, want %v", pos, tc.pos)
			}
			if !ordered.Equal(tc.kw, kw) {
				t.Errorf("keywords: got %v, want %v", kw, tc.kw)
			}
		})
	}
}
