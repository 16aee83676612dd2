package run

import (
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
)

// TestParseFunction pins parse_function's results as Python's shlex
// gives them.
func TestParseFunction(t *testing.T) {
	type out struct {
		Fun    string
		Args   []any
		Kwargs map[string]any
		OK     bool
	}
	tests := []struct {
		in   string
		want out
	}{
		{"test.arg(a, b, k=v)", out{"test.arg", []any{"a", "b"}, map[string]any{"k": "v"}, true}},
		{"cmd.run(echo hello)", out{"cmd.run", []any{"echohello"}, map[string]any{}, true}},
		{"cmd.run('echo hello')", out{"cmd.run", []any{"echo hello"}, map[string]any{}, true}},
		{`test.arg("a\"b", 'c\d')`, out{"test.arg", []any{`a"b`, `c\d`}, map[string]any{}, true}},
		{"test.arg([1, 2], d={a: 1})", out{"test.arg", []any{"[1,2]"}, map[string]any{"d": "{a:1}"}, true}},
		{"test.arg(f(x, y), z)", out{"test.arg", []any{"f(x,y)", "z"}, map[string]any{}, true}},
		{"test.arg()", out{"test.arg", nil, map[string]any{}, true}},
		{"test.arg('')", out{"test.arg", []any{""}, map[string]any{}, true}},
		{"test.arg(a).b.c ~ x", out{"test.arg", []any{"a"}, map[string]any{}, true}},
		{"test.arg(/srv/x-y)", out{"test.arg", []any{"/srv/x-y"}, map[string]any{}, true}},
		{"test.arg(a # b)", out{}},
		{"test.arg(", out{}},
		{"test.arg(a]", out{}},
		{"(a)", out{}},
		{"test.arg('a", out{}},
		{"test.arg", out{}},
	}
	for _, tc := range tests {
		fun, args, kw, ok := parseFunction(tc.in)
		got := out{Fun: fun, Args: args, OK: ok}
		if kw != nil {
			got.Kwargs = map[string]any{}
			kw.Range(func(k, v any) bool { got.Kwargs[ordered.KeyString(k)] = v; return true })
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("parseFunction(%q) (-want +got):\n%s", tc.in, d)
		}
	}
}

// FuzzParseFunction checks that any slot text parses or is refused
// without panicking, and that a parse names a function.
func FuzzParseFunction(f *testing.F) {
	for _, s := range []string{"test.arg(a, b, k=v)", "cmd.run('echo \\'x\\'')", "a([{(x)}])", "f(\"", "x(y) # z", "ß.é(ü)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fun, _, kw, ok := parseFunction(s)
		if ok && (fun == "" || kw == nil) {
			t.Fatalf("parseFunction(%q) ok with fun %q, kwargs %v", s, fun, kw)
		}
	})
}

// FuzzParseUmask checks the umask keyword's parse: any value is refused
// or gives permission bits, and what it accepts reads back the same.
func FuzzParseUmask(f *testing.F) {
	for _, s := range []string{"077", "0o22", "22", "0022", "999", "-1", "+7", "7_7", " 0O7 ", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, ok := parseUmask(s)
		if !ok {
			return
		}
		if n < 0 || n > 0o777 {
			t.Fatalf("parseUmask(%q) = %o", s, n)
		}
		if m, ok := parseUmask(strconv.FormatInt(int64(n), 8)); !ok || m != n {
			t.Fatalf("parseUmask(%q) = %o, but its octal form reads as %o, %v", s, n, m, ok)
		}
	})
}
