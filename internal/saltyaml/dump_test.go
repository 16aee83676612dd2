package saltyaml

import (
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Expected outputs come from Salt 3006's salt.utils.yaml.safe_dump
// (PyYAML 6.0 CSafeDumper with libyaml 0.2.5, allow_unicode=True).
func TestDump(t *testing.T) {
	flow := DumpOptions{Flow: true}
	block := DumpOptions{}
	auto := DumpOptions{AutoFlow: true}
	words := strings.Repeat("word ", 30)
	var ints []any
	for i := 1; i <= 35; i++ {
		ints = append(ints, i)
	}
	tests := []struct {
		name string
		v    any
		opts DumpOptions
		want string
	}{
		{"plain", "abc", flow, "abc\n"},
		{"empty", "", flow, "''\n"},
		{"bool word", "yes", flow, "'yes'\n"},
		{"octal-looking", "0644", flow, "'0644'\n"},
		{"08 stays plain", "08", flow, "08\n"},
		{"null", nil, flow, "null\n"},
		{"int", 1, flow, "1\n"},
		{"float", 1.5, flow, "1.5\n"},
		{"float exponent", 1e17, flow, "1.0e+17\n"},
		{"inf", math.Inf(1), flow, ".inf\n"},
		{"nan", math.NaN(), flow, ".nan\n"},
		{"true", true, flow, "true\n"},
		{"colon space", "a: b", flow, "'a: b'\n"},
		{"dash", "- a", flow, "'- a'\n"},
		{"comment", "a #x", flow, "'a #x'\n"},
		{"multiline", "x\ny\n", flow, "'x\n\n  y\n\n  '\n"},
		{"leading space", " x", flow, "' x'\n"},
		{"tab", "\tx", flow, "\"\\tx\"\n"},
		{"astral", "é\U0001F600", flow, "\"é\\U0001F600\"\n"},
		{"apostrophe", "it's", flow, "it's\n"},
		{"sexagesimal", "12:30", flow, "'12:30'\n"},
		{"date", "2020-01-01", flow, "'2020-01-01'\n"},
		{"1e3", "1e3", flow, "1e3\n"},
		{"null word", "null", flow, "'null'\n"},
		{"flow map", om("b", 1, "a", []any{1, "x"}), flow, "{b: 1, a: [1, x]}\n"},
		{"block map", om("b", 1, "a", []any{1, "x"}), block, "b: 1\na:\n- 1\n- x\n"},
		{"auto flow", om("b", 1, "a", []any{1, "x"}), auto, "b: 1\na: [1, x]\n"},
		{"nested block", om("b", om("c", []any{1, om("d", 2)}), "a", []any{}), block,
			"b:\n  c:\n  - 1\n  - d: 2\na: []\n"},
		{"seq of seq", []any{[]any{1, 2}, []any{3}}, block, "- - 1\n  - 2\n- - 3\n"},
		{"multiline in flow", om("a", "x\ny"), flow, "{a: 'x\n\n    y'}\n"},
		{"folded", words, block, "'word word word word word word word word word word word word word word word word word\n  word word word word word word word word word word word word word '\n"},
		{"folded in flow", om("k", words), flow, "{k: 'word word word word word word word word word word word word word word word word\n    word word word word word word word word word word word word word word '}\n"},
		{"complex key", om("x\ny", 1), block, "? 'x\n\n  y'\n: 1\n"},
		{"wrapped flow", ints, flow, "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23,\n  24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35]\n"},
		{"sorted", om("z", 1, "a", om("y", 1, "b", 2)), DumpOptions{Flow: true, SortKeys: true}, "{a: {b: 2, y: 1}, z: 1}\n"},
		{"mixed keys unsorted", om("z", 1, 2, 2), DumpOptions{Flow: true, SortKeys: true}, "{z: 1, 2: 2}\n"},
		{"indent 4", om("a", om("b", []any{1})), DumpOptions{Indent: 4}, "a:\n    b:\n    - 1\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Dump(tt.v, tt.opts)
			if err != nil {
				t.Fatalf("Dump: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Dump(%#v) mismatch (-want +got):\n%s", tt.v, diff)
			}
		})
	}
}

func TestDumpRoundTrip(t *testing.T) {
	v := om("mode", "0644", "n", 644, "b", "yes", "t", true, "e", "", "z", nil,
		"l", []any{"x\ny", 1.5, "a: b", om("k", "#c")}, "w", strings.Repeat("long words ", 20))
	for _, opts := range []DumpOptions{{Flow: true}, {}, {AutoFlow: true}} {
		out, err := Dump(v, opts)
		if err != nil {
			t.Fatal(err)
		}
		back, err := Load([]byte(out), "dump")
		if err != nil {
			t.Fatalf("Load(Dump) %q: %v", out, err)
		}
		if diff := cmp.Diff(v, back, cmpOpts); diff != "" {
			t.Errorf("round trip with %+v mismatch (-want +got):\n%s", opts, diff)
		}
	}
}

func TestDumpDQuoteEncode(t *testing.T) {
	if got, want := DumpDQuote("é\t\"x\\\u2028\U0001F600\u00a0"), `"\xE9\t\"x\\\L\U0001F600\_"`; got != want {
		t.Errorf("DumpDQuote = %s, want %s", got, want)
	}
	tests := []struct {
		v    any
		want string
	}{
		{"a b", `"a b"`}, {1, "1"}, {1.5, "1.5"}, {nil, "null"}, {true, "true"}, {1e17, "1.0e+17"},
		{math.Inf(-1), "-.inf"},
	}
	for _, tt := range tests {
		if got := Encode(tt.v); got != tt.want {
			t.Errorf("Encode(%#v) = %s, want %s", tt.v, got, tt.want)
		}
	}
	if _, err := EncodeScalar([]any{1}); err == nil {
		t.Error("EncodeScalar(list) succeeded, want an error")
	}
}

func TestFilterYAML(t *testing.T) {
	// notes.md item 28: the yaml filter sorts a Jinja dict's keys and
	// writes it on one line.
	got, err := FilterYAML(om("b", 1, "a", []any{"x", "yes"}), true, true)
	if err != nil {
		t.Fatal(err)
	}
	if want := "{a: [x, 'yes'], b: 1}"; got != want {
		t.Errorf("FilterYAML = %q, want %q", got, want)
	}
	got, _ = FilterYAML("abc", true, false)
	if got != "abc" {
		t.Errorf("FilterYAML(abc) = %q, want abc", got)
	}
}
