package saltyaml

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/google/go-cmp/cmp"
)

// Expected values were checked against PyYAML 6.0 (CSafeLoader) with
// Salt 3006's SaltYamlSafeLoader overrides (salt/utils/yamlloader.py).
func TestLoadScalars(t *testing.T) {
	tests := []struct {
		src  string
		want any
	}{
		// notes.md item 25
		{"0644", 644},
		{"08", "08"},
		{"0o644", "0o644"},
		{"1e3", "1e3"},
		{"2020-01-01", "2020-01-01"},
		{"2001-12-14t21:59:43.10-05:00", "2001-12-14t21:59:43.10-05:00"},
		{"2001-12-14 21:59:43.10 -5", "2001-12-14 21:59:43.10 -5"},
		{"12:30", 750},
		{"0x1F", 31},
		{"yes", true}, {"no", false}, {"on", true}, {"off", false},
		{"True", true}, {"FALSE", false}, {"Yes", true}, {"NO", false},
		{"y", "y"}, {"n", "n"}, {"Y", "Y"}, {"yEs", "yEs"}, {"tRUE", "tRUE"},
		{"1.10", 1.1},
		// integers
		{"0", 0}, {"00", 0}, {"-0", 0}, {"0_644", 644}, {"1_000", 1000},
		{"-0644", -420}, {"+0644", 420}, {"-0_7", -7},
		{"0b101", 5}, {"-0b11", -3}, {"-0x10", -16}, {"0X1F", "0X1F"},
		{"190:20:30", 685230}, {"-1:30", -90}, {"1:70", "1:70"}, {"0:30", "0:30"},
		{"+12", 12}, {"-8", -8}, {"09", "09"}, {"-08", "-08"},
		{"99999999999999999999", 1e20},
		// floats
		{"1.0e3", "1.0e3"}, {"1.0e+3", 1000.0}, {"1.", 1.0}, {".5", 0.5},
		{"._", "._"}, {".", "."}, {"1_0.5_", 10.5}, {"1:30.5", 90.5},
		{".inf", math.Inf(1)}, {"-.Inf", math.Inf(-1)}, {"+.INF", math.Inf(1)},
		{".NaN", math.NaN()}, {"-1.5", -1.5}, {"6.8523015e+5", 685230.15},
		// null
		{"~", nil}, {"null", nil}, {"Null", nil}, {"NULL", nil}, {"nULL", "nULL"},
		{"", nil}, {"# only a comment\n", nil}, {"---\n", nil}, {"--- ~\n...\n", nil},
		// strings
		{"'0644'", "0644"}, {`"yes"`, "yes"}, {"abc def", "abc def"},
		// explicit tags
		{"!!str 12", "12"}, {"!!int 0644", 644}, {"!!float 1", 1.0}, {"!!float 1e3", 1000.0},
		{"!!bool yes", true}, {"!!null x", nil}, {"!!timestamp 2001-01-01", "2001-01-01"},
		{"!<tag:yaml.org,2002:str> 1", "1"}, {"!!binary aGVsbG8=", "hello"},
		{"!!python/unicode abc", "abc"},
		// the non-specific tag resolves implicitly, even on quoted scalars
		{"! 123", 123}, {"! '12'", 12}, {"! x", "x"}, {`! ""`, nil},
		// ... except when the node is empty: libyaml marks it not implicit
		{"!", ""}, {"{a: !\n , b: ! # c\n}", om("a", "", "b", "")},
		{"-9223372036854775808", math.MinInt64}, {"9223372036854775808", 9223372036854775808.0},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			got, err := Load([]byte(tt.src), "t.sls")
			if err != nil {
				t.Fatalf("Load(%q): %v", tt.src, err)
			}
			if diff := cmp.Diff(tt.want, got, cmpOpts); diff != "" {
				t.Errorf("Load(%q) mismatch (-want +got):\n%s", tt.src, diff)
			}
		})
	}
}

func TestLoadCollections(t *testing.T) {
	tests := []struct {
		name, src string
		want      any
	}{
		{"order kept", "b: 1\na: 2\nc: 3\n", om("b", 1, "a", 2, "c", 3)},
		{"mode", "/etc/f:\n  file.managed:\n    - mode: 0644\n",
			om("/etc/f", om("file.managed", []any{om("mode", 644)}))},
		{"scalar keys", "2: a\nTrue: b\n~: c\n1.5: d\n", om(2, "a", true, "b", nil, "c", 1.5, "d")},
		{"value key", "=: 1\n", om("=", 1)},
		{"flow", "{a: [x, 'y', 1], b: {}}", om("a", []any{"x", "y", 1}, "b", om())},
		{"empty values", "a:\nb: []\n", om("a", nil, "b", []any{})},
		{"alias", "a: &x [1, 2]\nb: *x\n", om("a", []any{1, 2}, "b", []any{1, 2})},
		{"merge", "x: &a {p: 1, q: 2}\ny:\n  <<: *a\n  q: 3\n",
			om("x", om("p", 1, "q", 2), "y", om("p", 1, "q", 3))},
		{"merge goes first", "x: &a {p: 1}\ny:\n  r: 0\n  <<: *a\n",
			om("x", om("p", 1), "y", om("p", 1, "r", 0))},
		{"merge list", "a: &a {x: 1}\nb: &b {y: 2}\nc:\n  <<: [*a, *b]\n",
			om("a", om("x", 1), "b", om("y", 2), "c", om("y", 2, "x", 1))},
		{"explicit merge tag", "a: &a {x: 1}\nc: {!!merge <<: *a}\n", om("a", om("x", 1), "c", om("x", 1))},
		{"quoted << is a key", "'<<': 1\n", om("<<", 1)},
		{"self merge", "a: &a {x: 1, <<: *a}\n", om("a", om("x", 1))},
		{"self merge only", "a: &a {<<: *a}\n", om("a", om())},
		{"set", "!!set {a, b}", om("a", nil, "b", nil)},
		{"pairs", "!!pairs [a: 1, a: 2]", []any{[]any{"a", 1}, []any{"a", 2}}},
		{"omap as map", "!!omap {b: 1, a: 2}", om("b", 1, "a", 2)},
		{"document markers", "---\na: 1\n...\n", om("a", 1)},
		{"literal", "a: |\n  x\n  y\nb: 1\n", om("a", "x\ny\n", "b", 1)},
		{"literal strip", "a: |-\n  x\n\n", om("a", "x")},
		{"literal keep", "a: |+\n  x\n\n", om("a", "x\n\n")},
		{"folded", "a: >\n  x\n  y\n\n  z\n", om("a", "x y\nz\n")},
		{"plain multiline", "a: x\n  y\n\n  z\n", om("a", "x y\nz")},
		{"double quoted escapes", `a: "t\tn\u00e9\x41"`, om("a", "t\tnéA")},
		{"double quoted fold", "a: \"x\n  y\"\n", om("a", "x y")},
		{"single quoted", "a: 'it''s'\n", om("a", "it's")},
		{"comment", "a: 1 # c\n#b: 2\n", om("a", 1)},
		{"hash in word", "a: x#y\n", om("a", "x#y")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Load([]byte(tt.src), "t.sls")
			if err != nil {
				t.Fatalf("Load(%q): %v", tt.src, err)
			}
			if diff := cmp.Diff(tt.want, got, cmpOpts); diff != "" {
				t.Errorf("Load(%q) mismatch (-want +got):\n%s", tt.src, diff)
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name, src string
		want      Error
		text      string // substring of Error()
	}{
		{"duplicate id", "same_id:\n  x: 1\nother: 2\nsame_id: 3\n",
			Error{Line: 4, Column: 1, Stage: StageConstructor, Msg: "found conflicting ID 'same_id'",
				Context: "while constructing a mapping", ContextLine: 1, ContextColumn: 1},
			"while constructing a mapping\n  in \"t.sls\", line 1, column 1\nfound conflicting ID 'same_id'\n  in \"t.sls\", line 4, column 1"},
		{"python equality", "1: a\nTrue: b\n",
			Error{Line: 2, Column: 1, Stage: StageConstructor, Msg: "found conflicting ID 'True'",
				Context: "while constructing a mapping", ContextLine: 1, ContextColumn: 1}, ""},
		{"int and float", "1: a\n1.0: b\n",
			Error{Line: 2, Column: 1, Stage: StageConstructor, Msg: "found conflicting ID '1.0'",
				Context: "while constructing a mapping", ContextLine: 1, ContextColumn: 1}, ""},
		{"merge list conflict", "a: &a {x: 1}\nb: &b {x: 2}\nc:\n  <<: [*a, *b]\n",
			Error{Line: 1, Column: 8, Stage: StageConstructor, Msg: "found conflicting ID 'x'",
				Context: "while constructing a mapping", ContextLine: 4, ContextColumn: 3}, ""},
		{"tab indent", "foo:\n\tbar: 1\n",
			Error{Line: 2, Column: 1, Stage: StageScanner, Msg: "found character that cannot start any token",
				Context: "while scanning for the next token", ContextLine: 2, ContextColumn: 1},
			"while scanning for the next token\nfound character that cannot start any token\n  in \"t.sls\", line 2, column 1"},
		{"tab after scalar", "a: 1\n\tb: 2\n",
			Error{Line: 2, Column: 1, Stage: StageScanner, Msg: "found a tab character that violates indentation",
				Context: "while scanning a plain scalar", ContextLine: 1, ContextColumn: 4}, ""},
		{"two documents", "a: 1\n---\nb: 2\n",
			Error{Line: 2, Column: 1, Stage: StageComposer, Msg: "but found another document",
				Context: "expected a single document in the stream", ContextLine: 1, ContextColumn: 1}, ""},
		{"empty second document", "a: 1\n---\n",
			Error{Line: 2, Column: 1, Stage: StageComposer, Msg: "but found another document",
				Context: "expected a single document in the stream", ContextLine: 1, ContextColumn: 1}, ""},
		{"flow not closed", "a: [1, 2\nb: 3\n",
			Error{Line: 2, Column: 2, Stage: StageParser, Msg: "did not find expected ',' or ']'",
				Context: "while parsing a flow sequence", ContextLine: 1, ContextColumn: 4}, ""},
		{"mapping in scalar", "a: b: c\n",
			Error{Line: 1, Column: 5, Stage: StageScanner, Msg: "mapping values are not allowed in this context"}, ""},
		{"undefined alias", "a: *x\n",
			Error{Line: 1, Column: 4, Stage: StageComposer, Msg: "found undefined alias"}, ""},
		{"unacceptable key", "[a]: 2\n",
			Error{Line: 1, Column: 1, Stage: StageConstructor, Msg: "found unacceptable key sequence",
				Context: "while constructing a mapping", ContextLine: 1, ContextColumn: 1}, ""},
		{"unknown tag", "a: !foo x\n",
			Error{Line: 1, Column: 4, Stage: StageConstructor, Msg: "could not determine a constructor for the tag '!foo'"}, ""},
		{"value tag as value", "- =\n",
			Error{Line: 1, Column: 3, Stage: StageConstructor, Msg: "could not determine a constructor for the tag 'tag:yaml.org,2002:value'"}, ""},
		{"bad int", "a: !!int abc\n",
			Error{Line: 1, Column: 4, Stage: StageValue, Msg: "invalid literal for int() with base 10: 'abc'"}, ""},
		{"bad bool", "a: !!bool y\n",
			Error{Line: 1, Column: 4, Stage: StageValue, Msg: "'y'"}, ""},
		{"str tag on seq", "a: !!str [1]\n",
			Error{Line: 1, Column: 4, Stage: StageConstructor, Msg: "expected a scalar node, but found sequence"}, ""},
		{"merge scalar", "a: {<<: 1}",
			Error{Line: 1, Column: 9, Stage: StageConstructor, Msg: "expected a mapping or list of mappings for merging, but found scalar",
				Context: "while constructing a mapping", ContextLine: 1, ContextColumn: 4}, ""},
		{"merge list of seq", "- &a [1]\n- {<<: [*a]}",
			Error{Line: 1, Column: 3, Stage: StageConstructor, Msg: "expected a mapping for merging, but found sequence",
				Context: "while constructing a mapping", ContextLine: 2, ContextColumn: 3}, ""},
		{"tab line", "a: 1\n\t\nb: 2\n",
			Error{Line: 2, Column: 1, Stage: StageScanner, Msg: "found a tab character that violates indentation"}, ""},
		{"tab only", "\t\n",
			Error{Line: 1, Column: 1, Stage: StageScanner, Msg: "found character that cannot start any token",
				Context: "while scanning for the next token", ContextLine: 1, ContextColumn: 1}, ""},
		{"tab after dash", "- a\n-\tb\n",
			Error{Line: 2, Column: 2, Stage: StageScanner, Msg: "found character that cannot start any token",
				Context: "while scanning for the next token", ContextLine: 2, ContextColumn: 2}, ""},
		{"empty block key", "key:\n  a: y\n: 1\n",
			Error{Line: 3, Stage: StageParser, Msg: "did not find expected key"}, ""},
		{"empty flow key", "a: {: b}\n",
			Error{Line: 1, Stage: StageParser, Msg: "did not find expected node content"}, ""},
		{"document end only", "...\n",
			Error{Line: 1, Stage: StageParser, Msg: "did not find expected node content"}, ""},
		{"tag then flow end", "{a: !!str}\n",
			Error{Line: 1, Stage: StageScanner, Msg: "did not find expected whitespace or line break"}, ""},
		{"anchor chars", "&x! a\n",
			Error{Line: 1, Stage: StageScanner, Msg: "did not find expected alphabetic or numeric character"}, ""},
		{"duplicate anchor", "a: &x [1]\nb: &x [2]\nc: *x\n",
			Error{Line: 2, Column: 4, Stage: StageComposer, Msg: "second occurrence",
				Context: "found duplicate anchor; first occurrence", ContextLine: 1, ContextColumn: 4}, ""},
		{"bad second document", "a: 1\n---\nb: [\n",
			Error{Line: 2, Column: 1, Stage: StageComposer, Msg: "but found another document",
				Context: "expected a single document in the stream", ContextLine: 1, ContextColumn: 1}, ""},
		{"recursive", "&a [*a]",
			Error{Line: 1, Column: 1, Stage: StageConstructor, Msg: "found recursive alias, which Brine cannot represent"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Load([]byte(tt.src), "t.sls")
			var got *Error
			if !errors.As(err, &got) {
				t.Fatalf("Load(%q) error = %v, want *Error", tt.src, err)
			}
			tt.want.File = "t.sls"
			if diff := cmp.Diff(&tt.want, got); diff != "" {
				t.Errorf("Load(%q) error mismatch (-want +got):\n%s", tt.src, diff)
			}
			if !strings.Contains(got.Error(), tt.text) {
				t.Errorf("Error() = %q, want it to contain %q", got.Error(), tt.text)
			}
			if !strings.Contains(got.Error(), `"t.sls", line `) {
				t.Errorf("Error() = %q does not name file and line", got.Error())
			}
		})
	}
}

func TestParseNodeDecode(t *testing.T) {
	src := "web1:\n  host: 10.0.0.1\n  port: 0022\n"
	root, err := ParseNode([]byte(src), "roster")
	if err != nil {
		t.Fatal(err)
	}
	port := root.Content[1].Content[3]
	if port.Line != 3 || port.Value != "0022" {
		t.Fatalf("port node at line %d value %q, want line 3 value 0022", port.Line, port.Value)
	}
	v, err := Decode(port)
	if err != nil || v != 22 {
		t.Errorf("Decode(port) = %v, %v; want 22", v, err)
	}
	all, err := Decode(root)
	if err != nil {
		t.Fatal(err)
	}
	want := om("web1", om("host", "10.0.0.1", "port", 22))
	if diff := cmp.Diff(want, all, cmpOpts); diff != "" {
		t.Errorf("Decode(root) mismatch (-want +got):\n%s", diff)
	}
	if n, err := ParseNode(nil, "empty"); n != nil || err != nil {
		t.Errorf("ParseNode(empty) = %v, %v; want nil, nil", n, err)
	}
}

func TestAliasSharesValue(t *testing.T) {
	// Aliases share values, as PyYAML's constructor shares objects, so a
	// document is decoded at its written size.
	v, err := Load([]byte("a: &a [x, {y: 1}]\nb: [*a, *a]\n"), "shared")
	if err != nil {
		t.Fatal(err)
	}
	a := v.(*ordered.Map).Value("a").([]any)
	b := v.(*ordered.Map).Value("b").([]any)
	if &b[0].([]any)[0] != &a[0] || &b[1].([]any)[0] != &a[0] {
		t.Error("aliased list decoded more than once")
	}
	// A billion-laughs document is refused at once (see MaxExpanded),
	// without expanding it.
	var sb strings.Builder
	sb.WriteString("a0: &a0 [x, x]\n")
	for i := 1; i < 40; i++ {
		sb.WriteString("a" + strconv.Itoa(i) + ": &a" + strconv.Itoa(i) + " [*a" + strconv.Itoa(i-1) + ", *a" + strconv.Itoa(i-1) + "]\n")
	}
	var e *Error
	if _, err := Load([]byte(sb.String()), "bomb"); !errors.As(err, &e) || e.Line != 18 {
		t.Fatalf("Load = %v, want the alias bomb refused at line 18", err)
	}
}

func TestMergeChainIsLinear(t *testing.T) {
	// Each level merges the previous one twice; Salt flattens every node
	// once, so this is cheap, and the repeated key is a conflict.
	var b strings.Builder
	b.WriteString("a0: &a0 {x: 1}\n")
	for i := 1; i < 60; i++ {
		fmt.Fprintf(&b, "a%d: &a%d {<<: [*a%d, *a%d]}\n", i, i, i-1, i-1)
	}
	_, err := Load([]byte(b.String()), "merge")
	var e *Error
	if !errors.As(err, &e) || e.Msg != "found conflicting ID 'x'" {
		t.Fatalf("Load = %v, want a conflicting ID error", err)
	}
}

func TestSaltMessage(t *testing.T) {
	tests := []struct{ src, want string }{
		{"foo:\n\tbar: 1\n", "found character that cannot start any token"},
		{"same_id: 1\nsame_id: 2\n", "while constructing a mapping\n  in \"<unicode string>\", line 1, column 1\n" +
			"found conflicting ID 'same_id'\n  in \"<unicode string>\", line 2, column 1"},
		{"a: !!int x\n", "invalid literal for int() with base 10: 'x'"},
	}
	for _, tt := range tests {
		_, err := Load([]byte(tt.src), "init.sls")
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("Load(%q) = %v, want *Error", tt.src, err)
		}
		if got := e.SaltMessage(); got != tt.want {
			t.Errorf("SaltMessage() for %q = %q, want %q", tt.src, got, tt.want)
		}
	}
}

func TestTopFileBool(t *testing.T) {
	// notes.md item 26: an unquoted "- no" in top.sls is the bool False.
	got, err := Load([]byte("base:\n  '*':\n    - no\n    - 'no'\n"), "top.sls")
	if err != nil {
		t.Fatal(err)
	}
	want := om("base", om("*", []any{false, "no"}))
	if diff := cmp.Diff(want, got, cmpOpts); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
}
