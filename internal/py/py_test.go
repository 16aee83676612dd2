package py

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
)

// dict is a minimal ordered Dict for the tests (the project's map type
// lives above this package).
type dict struct{ items []Item }

func (d *dict) Len() int { return len(d.items) }

func (d *dict) Range(fn func(k, v any) bool) {
	for _, it := range d.items {
		if !fn(it.Key, it.Value) {
			return
		}
	}
}

// table is testdata/python.json, written by testdata/python.py.
type table struct {
	Python string `json:"python"`
	Values []struct {
		Value     tagged  `json:"value"`
		Repr      string  `json:"repr"`
		Str       string  `json:"str"`
		Type      string  `json:"type"`
		JSON      outcome `json:"json"`
		Indent4   outcome `json:"json_indent4"`
		Sorted2   outcome `json:"json_sorted_indent2"`
		JSONASCII outcome `json:"json_ascii"`
	} `json:"values"`
	Shlex []struct {
		Input         string  `json:"input"`
		Split         outcome `json:"split"`
		SplitNonPosix outcome `json:"split_nonposix"`
		SplitComments outcome `json:"split_comments"`
		Posix         outcome `json:"shlex_posix"`
		NonPosix      outcome `json:"shlex_nonposix"`
		EscapedQuotes outcome `json:"shlex_escapedquotes"`
		Quote         string  `json:"quote"`
	} `json:"shlex"`
}

type outcome struct {
	OK    json.RawMessage `json:"ok"`
	Error *string         `json:"error"`
}

type tagged map[string]json.RawMessage

func (tv tagged) value(t *testing.T) any {
	t.Helper()
	for kind, raw := range tv {
		switch kind {
		case "none":
			return nil
		case "bool":
			var b bool
			mustUnmarshal(t, raw, &b)
			return b
		case "int", "float":
			var s string
			mustUnmarshal(t, raw, &s)
			if kind == "int" {
				n, err := strconv.Atoi(s)
				if err != nil {
					t.Fatal(err)
				}
				return n
			}
			f, err := strconv.ParseFloat(s, 64)
			if err != nil {
				t.Fatal(err)
			}
			return f
		case "str":
			var s string
			mustUnmarshal(t, raw, &s)
			return s
		case "list":
			var l []tagged
			mustUnmarshal(t, raw, &l)
			out := []any{}
			for _, e := range l {
				out = append(out, e.value(t))
			}
			return out
		case "dict":
			var kvs [][2]tagged
			mustUnmarshal(t, raw, &kvs)
			d := &dict{}
			for _, kv := range kvs {
				d.items = append(d.items, Item{kv[0].value(t), kv[1].value(t)})
			}
			return d
		}
	}
	t.Fatalf("bad tagged value %v", tv)
	return nil
}

func mustUnmarshal(t *testing.T, raw json.RawMessage, v any) {
	t.Helper()
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("testdata: %v", err)
	}
}

func loadTable(t *testing.T) table {
	t.Helper()
	data, err := os.ReadFile("testdata/python.json")
	if err != nil {
		t.Fatal(err)
	}
	var tb table
	if err := json.Unmarshal(data, &tb); err != nil {
		t.Fatal(err)
	}
	return tb
}

func TestValuesAsPython(t *testing.T) {
	tb := loadTable(t)
	for _, row := range tb.Values {
		v := row.Value.value(t)
		if got := Repr(v); got != row.Repr {
			t.Errorf("Repr(%s) = %q, Python %s", row.Repr, got, row.Repr)
		}
		if got := Str(v); got != row.Str {
			t.Errorf("Str(%s) = %q, Python %q", row.Repr, got, row.Str)
		}
		if got := TypeName(v); got != row.Type {
			t.Errorf("TypeName(%s) = %q, Python %q", row.Repr, got, row.Type)
		}
		checkJSON(t, row.Repr, "json.dumps", v, JSONOptions{Indent: -1}, row.JSON)
		checkJSON(t, row.Repr, "indent=4", v, JSONOptions{Indent: 4}, row.Indent4)
		checkJSON(t, row.Repr, "indent=2 sort_keys", v, JSONOptions{Indent: 2, SortKeys: true}, row.Sorted2)
		checkJSON(t, row.Repr, "ensure_ascii", v, JSONOptions{Indent: -1, EnsureASCII: true}, row.JSONASCII)
	}
}

func checkJSON(t *testing.T, name, how string, v any, o JSONOptions, want outcome) {
	t.Helper()
	got, err := JSON(v, o)
	if want.Error != nil {
		if err == nil {
			t.Errorf("JSON(%s, %s) = %q, Python raised %q", name, how, got, *want.Error)
		}
		return
	}
	var s string
	mustUnmarshal(t, want.OK, &s)
	if err != nil || got != s {
		t.Errorf("JSON(%s, %s) = %q, %v; Python %q", name, how, got, err, s)
	}
}

func TestShlexAsPython(t *testing.T) {
	tb := loadTable(t)
	posix := func() *Lexer { return NewLexer(true) }
	escq := func() *Lexer { l := NewLexer(true); l.EscapedQuotes = `"'`; return l }
	comments := func() *Lexer { l := NewLexer(true); l.WhitespaceSplit = true; return l }
	for _, row := range tb.Shlex {
		checkTokens(t, row.Input, "split", Split, row.Split)
		checkTokens(t, row.Input, "split posix=False", SplitNonPosix, row.SplitNonPosix)
		checkTokens(t, row.Input, "split comments=True", comments().Tokens, row.SplitComments)
		checkTokens(t, row.Input, "shlex(posix=True)", posix().Tokens, row.Posix)
		checkTokens(t, row.Input, "shlex(posix=False)", NewLexer(false).Tokens, row.NonPosix)
		checkTokens(t, row.Input, "escapedquotes", escq().Tokens, row.EscapedQuotes)
		if got := Quote(row.Input); got != row.Quote {
			t.Errorf("Quote(%q) = %q, Python %q", row.Input, got, row.Quote)
		}
	}
}

func checkTokens(t *testing.T, in, how string, split func(string) ([]string, error), want outcome) {
	t.Helper()
	got, err := split(in)
	if want.Error != nil {
		if err == nil || err.Error() != *want.Error {
			t.Errorf("%s(%q) = %q, %v; Python raised %q", how, in, got, err, *want.Error)
		}
		return
	}
	var words []string
	mustUnmarshal(t, want.OK, &words)
	if err != nil || !equalWords(got, words) {
		t.Errorf("%s(%q) = %q, %v; Python %q", how, in, got, err, words)
	}
}

func equalWords(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestReprSelfContainingDict(t *testing.T) {
	d := &dict{}
	d.items = append(d.items, Item{"self", d})
	if got := Repr(d); got != "{'self': {...}}" {
		t.Errorf("Repr = %q, want Python's {'self': {...}}", got)
	}
}

// TestWriteDictElem checks that WriteDict lays a dict out as Python does
// and hands every key and value, in order, to the caller's writer.
func TestWriteDictElem(t *testing.T) {
	d := &dict{items: []Item{{"a", 1}, {2, []any{"x"}}}}
	var b strings.Builder
	WriteDict(&b, d, func(v any) { b.WriteString("<" + Repr(v) + ">") })
	if got, want := b.String(), "{<'a'>: <1>, <2>: <['x']>}"; got != want {
		t.Errorf("WriteDict = %q, want %q", got, want)
	}
	b.Reset()
	WriteDict(&b, &dict{}, func(any) { t.Error("elem called for an empty dict") })
	if b.String() != "{}" {
		t.Errorf("WriteDict(empty) = %q, want {}", b.String())
	}
}

func FuzzSplit(f *testing.F) {
	for _, s := range []string{`a 'b c' "d\"e"`, `x\`, `'open`, "a#b\nc"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		words, err := Split(s)
		if err != nil {
			return
		}
		// Re-quoting every word and splitting again gives the words back.
		var joined string
		for i, w := range words {
			if i > 0 {
				joined += " "
			}
			joined += Quote(w)
		}
		again, err := Split(joined)
		if err != nil || !equalWords(again, words) {
			t.Fatalf("Split(%q) = %q; rejoined %q splits to %q, %v", s, words, joined, again, err)
		}
	})
}

type fakeDict int

func (d fakeDict) Len() int                  { return int(d) }
func (d fakeDict) Range(func(k, v any) bool) {}

func TestTruthy(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want bool
	}{
		{nil, false}, {false, false}, {true, true}, {0, false}, {3, true}, {int64(0), false}, {0.0, false}, {0.5, true},
		{"", false}, {"0", true}, {[]any{}, false}, {[]any{nil}, true}, {fakeDict(0), false}, {fakeDict(1), true}, {struct{}{}, true},
	} {
		if got := Truthy(tc.v); got != tc.want {
			t.Errorf("Truthy(%#v) = %v, want %v", tc.v, got, tc.want)
		}
	}
}
