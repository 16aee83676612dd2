package target

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
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

// FuzzPyRegex checks that translating any Python pattern either fails
// with a *PatternError or yields a regexp that runs.
func FuzzPyRegex(f *testing.F) {
	for _, s := range []string{`web\d+$`, `(?i)WEB`, `(?P<n>a)(?P=n)`, `[^]\w-]{,3}`, `\x41\u0042\103`, `(?#x)a|b`, `(?s-i:a.)`, `[\b\8]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, pat string) {
		re, err := compilePyRegex(pat)
		if err != nil {
			var pe *PatternError
			if !errors.As(err, &pe) {
				t.Fatalf("compilePyRegex(%q) error %v is not a *PatternError", pat, err)
			}
			return
		}
		re.MatchString("web1")
	})
}

// FuzzGlob checks that any glob compiles (CPython's fnmatch accepts every
// pattern) and that lowercase matching agrees with matching the
// lowercased string.
func FuzzGlob(f *testing.F) {
	for _, s := range []string{"web*", "[!a-c-e]?", "[]-a]*", "[z-a]", "*a*b*"} {
		f.Add(s, "Web-1")
	}
	f.Fuzz(func(t *testing.T, pat, name string) {
		g, err := compileGlob(pat)
		if err != nil {
			t.Fatalf("compileGlob(%q): %v", pat, err)
		}
		if !utf8.ValidString(name) {
			return
		}
		if a, b := g.matchLower(name), g.match(strings.ToLower(name)); a != b {
			t.Fatalf("matchLower(%q) = %v, match(lower) = %v for %q", name, a, b, pat)
		}
	})
}
