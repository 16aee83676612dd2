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

// FuzzCompoundSalt feeds arbitrary compound expressions to Salt's
// evaluation: it must not fail other than with an *EvalError or
// ErrUnsupported, and where Compile accepts the expression both sides
// must agree with the compiled matcher.
func FuzzCompoundSalt(f *testing.F) {
	for _, s := range []string{
		"web*", "( )", "not ( )", "S@bad or web*", "( web*", "web* or db* ( web* )", "N@nope web*",
		"E@( or web*", "P@os:( and web*", "not not x", "S@bad ( x )", "( ) ( )", "R@%c", "X@foo",
	} {
		f.Add(s)
	}
	opts := Options{Nodegroups: testNodegroups()}
	ms := []*Minion{{ID: "db1"}, testMinion("web1")} // in id order, as CompoundMinions returns them
	all := []string{"db1", "web1"}
	data := func(id string) (*Minion, bool) {
		if id == "web1" {
			return ms[1], true
		}
		return ms[0], true
	}
	f.Fuzz(func(t *testing.T, expr string) {
		c, cerr := Compile(expr, Compound, opts)
		for _, m := range ms {
			v, _, err := CompoundValue(expr, m, opts)
			var ee *EvalError
			if err != nil && !errors.As(err, &ee) && !errors.Is(err, ErrUnsupported) {
				t.Fatalf("CompoundValue(%q): %v is neither an *EvalError nor unsupported", expr, err)
			}
			if cerr == nil && err == nil && v != c.Match(m) {
				t.Fatalf("CompoundValue(%q) on %s = %v, Compile's matcher says %v", expr, m.ID, v, c.Match(m))
			}
		}
		ids, _, err := CompoundMinions(expr, all, data, false, opts)
		var ee *EvalError
		if err != nil && !errors.As(err, &ee) && !errors.Is(err, ErrUnsupported) {
			t.Fatalf("CompoundMinions(%q): %v is neither an *EvalError nor unsupported", expr, err)
		}
		if cerr == nil && err == nil {
			var want []string
			for _, m := range ms {
				if c.Match(m) {
					want = append(want, m.ID)
				}
			}
			if strings.Join(want, ",") != strings.Join(ids, ",") {
				t.Fatalf("CompoundMinions(%q) = %v, Compile's matcher says %v", expr, ids, want)
			}
		}
	})
}
