package saltyaml

import (
	"errors"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
)

func FuzzLoad(f *testing.F) {
	for _, s := range []string{
		"a: 0644\nb: [1, {c: d}]\n", "x: &a {p: 1}\ny: {<<: *a, q: 2}\n",
		"foo:\n\tbar: 1\n", "a: |\n  x\n", "- !!binary aGVsbG8=\n", "a: 1\n---\nb: 2\n",
		"&a [*a]", "? [a]\n: b\n", "a: 12:30\nb: .inf\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		v, err := Load(src, "fuzz.sls")
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Load error %T is not *Error: %v", err, err)
			}
			if e.Line < 1 {
				t.Fatalf("Load error without a line: %#v", e)
			}
			return
		}
		// What loads must dump and load back without error.
		out, err := Dump(v, DumpOptions{})
		if err != nil {
			t.Fatalf("Dump(%#v): %v", v, err)
		}
		back, err := Load([]byte(out), "dumped.sls")
		if err != nil {
			t.Fatalf("reload of dump %q: %v", out, err)
		}
		// !!binary gives byte strings, which Dump does not tag back.
		if diff := cmp.Diff(v, back, cmpOpts); diff != "" && validUTF8(v) {
			t.Fatalf("dump %q does not load back (-loaded +reloaded):\n%s", out, diff)
		}
	})
}

func FuzzParseCLIArg(f *testing.F) {
	for _, s := range []string{"yes", "0644", "{a: 1}", "[1, 2] #c", "a=b", "#", "!", "1_000", "name=[x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_ = ParseCLIArg(s)
		ParseInput([]string{s, "k=" + s})
	})
}

func validUTF8(v any) bool {
	switch x := v.(type) {
	case string:
		return utf8.ValidString(x)
	case []any:
		for _, e := range x {
			if !validUTF8(e) {
				return false
			}
		}
	case *ordered.Map:
		ok := true
		x.Range(func(k, e any) bool { ok = validUTF8(k) && validUTF8(e); return ok })
		return ok
	}
	return true
}
