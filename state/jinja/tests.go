package jinja

import (
	"math"
	"regexp"
	"unicode"

	"github.com/brinesalt/brine/internal/ordered"
)

// testFunc is a Jinja test ("x is defined").
type testFunc func(r *runner, v any, args []any) (bool, error)

// tests are Jinja2's builtin tests plus Salt's (match, equalto, list).
var tests map[string]testFunc

func init() {
	tests = map[string]testFunc{
		"defined":   func(_ *runner, v any, _ []any) (bool, error) { _, u := v.(*undefined); return !u, nil },
		"undefined": func(_ *runner, v any, _ []any) (bool, error) { _, u := v.(*undefined); return u, nil },
		"none":      func(_ *runner, v any, _ []any) (bool, error) { return v == nil, nil },
		"boolean":   func(_ *runner, v any, _ []any) (bool, error) { _, ok := v.(bool); return ok, nil },
		"false":     func(_ *runner, v any, _ []any) (bool, error) { return v == false, nil },
		"true":      func(_ *runner, v any, _ []any) (bool, error) { return v == true, nil },
		"integer":   func(_ *runner, v any, _ []any) (bool, error) { _, ok := v.(int); return ok, nil },
		"float":     func(_ *runner, v any, _ []any) (bool, error) { _, ok := v.(float64); return ok, nil },
		"number": func(_ *runner, v any, _ []any) (bool, error) {
			_, ok := numeric(v)
			return ok, nil
		},
		"string":   func(_ *runner, v any, _ []any) (bool, error) { _, ok := v.(string); return ok, nil },
		"mapping":  func(_ *runner, v any, _ []any) (bool, error) { _, ok := v.(*ordered.Map); return ok, nil },
		"sequence": tSequence,
		"iterable": tIterable,
		"callable": func(_ *runner, v any, _ []any) (bool, error) { _, ok := v.(callable); return ok, nil },
		"list": func(_ *runner, v any, _ []any) (bool, error) {
			switch v.(type) {
			case *pyList, tuple:
				return true, nil
			}
			return false, nil
		},
		"lower": func(r *runner, v any, _ []any) (bool, error) {
			s, err := r.toStr(v)
			return hasCased(s) && s == lowerStr(s), err
		},
		"upper": func(r *runner, v any, _ []any) (bool, error) {
			s, err := r.toStr(v)
			return hasCased(s) && s == upperStr(s), err
		},
		"odd":         intTest(func(n int) bool { return n%2 != 0 }),
		"even":        intTest(func(n int) bool { return n%2 == 0 }),
		"divisibleby": tDivisibleby,
		"eq":          cmpTest("=="),
		"equalto":     cmpTest("=="),
		"==":          cmpTest("=="),
		"ne":          cmpTest("!="),
		"!=":          cmpTest("!="),
		"lt":          cmpTest("<"),
		"lessthan":    cmpTest("<"),
		"<":           cmpTest("<"),
		"le":          cmpTest("<="),
		"<=":          cmpTest("<="),
		"gt":          cmpTest(">"),
		"greaterthan": cmpTest(">"),
		">":           cmpTest(">"),
		"ge":          cmpTest(">="),
		">=":          cmpTest(">="),
		"in":          tIn,
		"sameas":      tSameas,
		"escaped":     func(_ *runner, _ any, _ []any) (bool, error) { return false, nil },
		"filter":      func(_ *runner, v any, _ []any) (bool, error) { s, _ := v.(string); _, ok := filters[s]; return ok, nil },
		"test":        func(_ *runner, v any, _ []any) (bool, error) { s, _ := v.(string); _, ok := tests[s]; return ok, nil },
		"match":       tMatch,
	}
}

func (r *runner) applyTest(t *testExpr, f *frame) (any, error) {
	fn, ok := tests[t.name]
	if !ok {
		return nil, &tplError{kind: kindSyntax, msg: "No test named '" + t.name + "' found.", line: t.line}
	}
	v, err := r.eval(t.node, f)
	if err != nil {
		return nil, err
	}
	args := make([]any, 0, len(t.args))
	for _, a := range t.args {
		x, err := r.eval(a, f)
		if err != nil {
			return nil, err
		}
		args = append(args, x)
	}
	res, err := fn(r, v, args)
	if err != nil {
		return nil, err
	}
	return res != t.negate, nil
}

// tSequence is jinja2's test_sequence, which swallows any failure of
// len() or __getitem__, an undefined's included.
func tSequence(r *runner, v any, _ []any) (bool, error) {
	switch v.(type) {
	case string, *pyList, tuple, *namedTuple, *ordered.Map:
		return true, nil
	}
	return false, nil
}

// hasCased reports whether s has a letter with case, which Python's
// islower and isupper require.
func hasCased(s string) bool {
	for _, c := range s {
		if unicode.IsUpper(c) || unicode.IsLower(c) || unicode.IsTitle(c) {
			return true
		}
	}
	return false
}

func tIterable(r *runner, v any, _ []any) (bool, error) {
	switch x := v.(type) {
	case string, *pyList, tuple, *ordered.Map:
		return true, nil
	case *undefined:
		if r.strictFor(x) {
			return false, x.err()
		}
		return true, nil
	}
	return false, nil
}

// intTest is jinja2's even/odd: value % 2 compared with 0 or 1, so the
// errors are those of Python's % operator.
func intTest(fn func(int) bool) testFunc {
	return func(r *runner, v any, _ []any) (bool, error) {
		m, err := r.arith("%", v, 2)
		if err != nil {
			return false, err
		}
		switch x := m.(type) {
		case int:
			return fn(x), nil
		case float64:
			return x == math.Trunc(x) && fn(int(x)), nil
		}
		return false, nil
	}
}

func tDivisibleby(r *runner, v any, args []any) (bool, error) {
	if len(args) != 1 {
		return false, typeErr("divisibleby() missing 1 required positional argument: 'num'")
	}
	res, err := r.arith("%", v, args[0])
	if err != nil {
		return false, err
	}
	return equal(res, 0), nil
}

func cmpTest(op string) testFunc {
	return func(r *runner, v any, args []any) (bool, error) {
		if len(args) != 1 {
			return false, typeErr("test takes exactly one argument")
		}
		return r.compareOp(op, v, args[0])
	}
}

func tIn(r *runner, v any, args []any) (bool, error) {
	if len(args) != 1 {
		return false, typeErr("in test takes exactly one argument")
	}
	return r.contains(args[0], v)
}

// tSameas approximates Python's "is": identity for containers, value
// equality of the same type for the immutable singletons and scalars.
func tSameas(_ *runner, v any, args []any) (bool, error) {
	if len(args) != 1 {
		return false, typeErr("sameas takes exactly one argument")
	}
	o := args[0]
	switch x := v.(type) {
	case nil, bool:
		return v == o, nil
	case *pyList:
		y, ok := o.(*pyList)
		return ok && x == y, nil
	case *ordered.Map:
		y, ok := o.(*ordered.Map)
		return ok && x == y, nil
	case int, float64, string:
		return typeName(v) == typeName(o) && v == o, nil
	}
	return false, nil
}

// tMatch is Salt's "match" test (salt/utils/jinja.py test_match).
func tMatch(r *runner, v any, args []any) (bool, error) {
	if len(args) < 1 {
		return false, typeErr("test_match() missing 1 required positional argument: 'rgx'")
	}
	s, ok := v.(string)
	if !ok {
		return false, typeErr("expected string or bytes-like object")
	}
	pat, _ := args[0].(string)
	ic := len(args) > 1 && args[1] == true
	ml := len(args) > 2 && args[2] == true
	re, err := compilePyRegex(pat, ic, ml)
	if err != nil {
		return false, err
	}
	loc := re.FindStringIndex(s)
	return loc != nil && loc[0] == 0, nil
}

// compilePyRegex compiles a Python re pattern with Go's RE2, translating
// the flags Salt's filters expose.
func compilePyRegex(pat string, ignoreCase, multiline bool) (*regexp.Regexp, error) {
	flags := ""
	if ignoreCase {
		flags += "i"
	}
	if multiline {
		flags += "m"
	}
	if flags != "" {
		pat = "(?" + flags + ")" + pat
	}
	pat = translatePyRegex(pat)
	re, err := regexp.Compile(pat)
	if err != nil {
		return nil, runtimeErr("%s", err.Error())
	}
	return re, nil
}

// translatePyRegex rewrites Python-only syntax RE2 also understands
// differently: named groups (?P<n>...) are accepted by both; \Z becomes \z.
func translatePyRegex(p string) string {
	out := make([]byte, 0, len(p))
	for i := 0; i < len(p); i++ {
		if p[i] == '\\' && i+1 < len(p) {
			if p[i+1] == 'Z' {
				out = append(out, '\\', 'z')
			} else {
				out = append(out, p[i], p[i+1])
			}
			i++
			continue
		}
		out = append(out, p[i])
	}
	return string(out)
}
