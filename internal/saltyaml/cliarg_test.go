package saltyaml

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Expected values were checked against Salt 3006's yamlify_arg and
// parse_kwarg (salt/utils/args.py) running on PyYAML 6.0 with libyaml.
func TestParseCLIArg(t *testing.T) {
	tests := []struct {
		in   string
		want any
	}{
		// notes.md item 26: name=yes becomes True
		{"yes", true}, {"no", false}, {"True", true}, {"y", "y"}, {"n", "n"},
		{"None", nil}, {"none", "none"}, {"null", nil}, {"~", nil},
		{"0644", 644}, {"08", "08"}, {"0o644", "0o644"}, {"1e3", "1e3"},
		{"1.10", 1.1}, {"12:30", 750}, {"0x1F", 31}, {"-0644", -420},
		{"-1", -1}, {"+1", 1}, {".inf", math.Inf(1)}, {".nan", math.NaN()}, {"1.", 1.0},
		// kept as strings
		{"1_000", "1_000"}, {"_", "_"}, {"1_", "1_"}, {"  ", "  "}, {"---", "---"}, {"...", "..."},
		{"|", "|"}, {"!", "!"}, {"a\tb", "a\tb"}, {"a\nb", "a\nb"}, {"'unterminated", "'unterminated"},
		{"- a", "- a"}, {"foo: bar", "foo: bar"}, {" {a: 1}", " {a: 1}"}, {"key: [1, 2]", "key: [1, 2]"},
		{"{{a}}", "{{a}}"}, {"{a: 1, a: 2}", "{a: 1, a: 2}"}, {"abc: &x 1", "abc: &x 1"},
		{"*x", "*x"}, {"@x", "@x"}, {"`x", "`x"}, {"%", "%"}, {"-", "-"}, {".", "."},
		{"=", "="}, {"<<", "<<"}, {"!foo x", "!foo x"},
		{"!!binary aGVsbG8=", "!!binary aGVsbG8="}, {"!!set {a}", "!!set {a}"},
		{"!!pairs [a: 1]", "!!pairs [a: 1]"}, {"!!omap [a: 1]", "!!omap [a: 1]"},
		{"&x", nil},
		// comments: replaced only by a non-string, non-null value
		{"#", "#"}, {"#x", "#x"}, {"a#b", "a#b"}, {"a #b", "a #b"}, {"None # c", "None # c"},
		{"[1, 2] #c", []any{1, 2}}, {"{a: 1} # c", om("a", 1)}, {"a: b #c", om("a", "b")},
		{"True # comment", true}, {"5 # c", 5},
		// collections need their brackets
		{"[a, b]", []any{"a", "b"}}, {"{a: 1}", om("a", 1)},
		{`{"id": "x"}`, om("id", "x")}, {`[{"id": "x"}]`, []any{om("id", "x")}},
		{"[{id: x}]", []any{om("id", "x")}}, {"{id:x}", om("id:x", nil)},
		{"{<<: {a: 1}}", om("a", 1)}, {"[1, [2, {b: c}]]", []any{1, []any{2, om("b", "c")}}},
		// strings
		{"!!str 1", "1"}, {"!!int 0644", 644}, {"'quoted'", "quoted"}, {`"dq"`, "dq"},
		{`"a\tb"`, "a\tb"}, {"2020-01-01", "2020-01-01"}, {"é", "é"}, {"! 12", 12},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got := ParseCLIArg(tt.in)
			if diff := cmp.Diff(tt.want, got, cmpOpts); diff != "" {
				t.Errorf("ParseCLIArg(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestParseKwarg(t *testing.T) {
	tests := []struct {
		in          string
		name, value string
		ok          bool
	}{
		{"a=b", "a", "b", true},
		{"name=yes", "name", "yes", true},
		{"a=", "a", "", true},
		{"_a=b", "_a", "b", true},
		{"a.b-c=1", "a.b-c", "1", true},
		{"é=1", "é", "1", true},
		{"日本=x", "日本", "x", true},
		{"a=b=c", "a", "b=c", true},
		{"a=b\n", "a", "b", true},
		{`a="b c"`, "a", `"b c"`, true},
		{`exclude=[{"id": "x"}]`, "exclude", `[{"id": "x"}]`, true},
		{"²=1", "²", "1", true},
		{"a٣=1", "a٣", "1", true},
		{"A_1.x-y=z", "A_1.x-y", "z", true},
		{"a==b", "", "", false},
		{"=b", "", "", false},
		{"1a=b", "", "", false},
		{"٣a=1", "", "", false},
		{"-a=1", "", "", false},
		{".a=1", "", "", false},
		{"a b=1", "", "", false},
		{"a=b\nc", "", "", false},
		{"a=b\n\n", "", "", false},
		{"a\n=b", "", "", false},
		{`"a=b"`, "", "", false},
		{"'a'=b", "", "", false},
		{"a!=b", "", "", false},
		{"plain", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			name, value, ok := ParseKwarg(tt.in)
			if name != tt.name || value != tt.value || ok != tt.ok {
				t.Errorf("ParseKwarg(%q) = %q, %q, %v; want %q, %q, %v",
					tt.in, name, value, ok, tt.name, tt.value, tt.ok)
			}
		})
	}
}

func TestParseInput(t *testing.T) {
	args := []string{
		"web", "name=yes", "0644", `exclude=[{"id": "x"}]`, "a==b",
		"mode=0644", "name=second", "cmd=echo a=b", "raw=[1]", `'{"k": 1}'`,
	}
	pos, kw := ParseInput(args, "raw")
	wantPos := []any{"web", 644, "a==b", `{"k": 1}`}
	wantKw := om("name", "second", "exclude", []any{om("id", "x")}, "mode", 644,
		"cmd", "echo a=b", "raw", "[1]")
	if diff := cmp.Diff(wantPos, pos, cmpOpts); diff != "" {
		t.Errorf("positional mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantKw, kw, cmpOpts); diff != "" {
		t.Errorf("keyword mismatch (-want +got):\n%s", diff)
	}
	pos, kw = ParseInput(nil)
	if len(pos) != 0 || kw == nil || kw.Len() != 0 {
		t.Errorf("ParseInput(nil) = %v, %v; want empty, empty", pos, kw)
	}
}

// TestConditionedInput pins what the salt command line publishes:
// parse_input then condition_input, so keywords travel in one
// {"__kwarg__": True} dict after the positional arguments, and long
// integers (job ids) as their digits.
func TestConditionedInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []any
	}{
		{[]string{"web", "test=True"}, []any{"web", om("__kwarg__", true, "test", true)}},
		{[]string{"1", "x=a", "raw=[1]", "x=b"}, []any{1, om("__kwarg__", true, "x", "b", "raw", "[1]")}},
		{[]string{"20261201223851123456", "jid=20261201223851123456"},
			[]any{"20261201223851123456", om("__kwarg__", true, "jid", "20261201223851123456")}},
		{[]string{"1.5", "echo a=b c"}, []any{1.5, "echo a=b c"}},
		{nil, []any{}},
	} {
		got := ConditionedInput(tc.args, "raw")
		if diff := cmp.Diff(tc.want, got, cmpOpts); diff != "" {
			t.Errorf("ConditionedInput(%q) (-want +got):\n%s", tc.args, diff)
		}
	}
}
