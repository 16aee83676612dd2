package pkgtest

import (
	"context"
	"testing"

	"github.com/brinesalt/brine/state/modules/pkg/syscmd"
)

func TestGlob(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"a", "a", true}, {"a", "b", false}, {"a *", "a b/c d", true}, {"* x", "a x", true},
		{"a*b*c", "aXbYc", true}, {"a*b*c", "aXcYb", false}, {"*", "", true}, {"a*", "b", false},
	}
	for _, tt := range tests {
		if got := Glob(tt.pattern, tt.s); got != tt.want {
			t.Errorf("Glob(%q, %q) = %v", tt.pattern, tt.s, got)
		}
	}
}

func TestFake(t *testing.T) {
	f := (&Fake{}).Once("tool *", 0, "first").On("tool *", 1, "then").Fail("other", 2, "bad")
	ctx := context.Background()
	run := func(args ...string) syscmd.Result {
		r, _ := f.Run(ctx, syscmd.Cmd{Args: args})
		return r
	}
	if r := run("tool", "x"); r.Stdout != "first" {
		t.Errorf("first = %+v", r)
	}
	if r := run("tool", "y"); r.Stdout != "then" || r.Retcode != 1 {
		t.Errorf("then = %+v", r)
	}
	if r := run("other"); r.Stderr != "bad" || r.Retcode != 2 {
		t.Errorf("other = %+v", r)
	}
	if r := run("unknown"); r != (syscmd.Result{}) {
		t.Errorf("unknown = %+v", r)
	}
	if got := f.Changing("tool"); len(got) != 2 || got[0] != "other" {
		t.Errorf("Changing = %v", got)
	}
}
