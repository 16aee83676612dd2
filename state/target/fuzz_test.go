package target

import (
	"errors"
	"testing"
)

// FuzzCompile feeds arbitrary compound expressions to the compiler: it
// must either return a *SyntaxError or a matcher that can run.
func FuzzCompile(f *testing.F) {
	for _, s := range []string{
		"web*", "G@os:Debian and web*", "( web* or db* ) and not G@os:Ubuntu",
		"not not x", "( )", "N@webdeb or N@loop_a", "E@web\\d+ and P@os:deb.*",
		"G;@env;name;prod", "S@10.0.0.0/8 or S@::1", "L@a,b,c", "I@role:web*", "J@x:(?=y)",
		"web[!1-3]*", "X@foo", "R@%c", "*:*", "G@*:*:x",
	} {
		f.Add(s)
	}
	opts := Options{Nodegroups: testNodegroups()}
	m := testMinion("web1")
	f.Fuzz(func(t *testing.T, expr string) {
		c, err := Compile(expr, Compound, opts)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Compile(%q) error %v is not a *SyntaxError", expr, err)
			}
			if se.Pos < 0 || se.Pos > len(expr) {
				t.Fatalf("Compile(%q) error position %d out of range", expr, se.Pos)
			}
			return
		}
		c.Match(m)
		c.Match(&Minion{})
	})
}
