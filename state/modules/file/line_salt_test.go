package file

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestLineAgainstSalt replays cases whose results were produced by
// running Salt 3006's own _set_line and file.line post-processing
// (testdata/line_salt3006.json): text, arguments, and the resulting text
// or error message.
func TestLineAgainstSalt(t *testing.T) {
	b, err := os.ReadFile("testdata/line_salt3006.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Text string
		Kw   map[string]*string
		Res  *string
		Err  *string
	}
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	bad := 0
	for _, c := range cases {
		mode := *c.Kw["mode"]
		o := LineOpts{Content: c.Kw["content"], Match: c.Kw["match"], Before: c.Kw["before"], After: c.Kw["after"], Location: c.Kw["location"], Indent: true}
		if o.Before == nil && o.After == nil && (o.Match == nil || *o.Match == "") {
			o.Match = o.Content
		}
		lines := ReadLines(c.Text)
		if n := len(lines); n > 0 && eol(lines[n-1]) != "" {
			lines = append(lines, "")
		}
		if len(c.Text) == 0 && (mode == "delete" || mode == "replace") {
			lines = nil
		}
		var got *string
		var gerr error
		out, err := setLine(lines, o, mode)
		if err != nil {
			gerr = err
		} else {
			for i, l := range out {
				if eol(l) == "" && i+1 < len(out) {
					prev := 1
					if i > 0 {
						prev = i - 1
					}
					out[i] = setLineEOL(out[prev], l)
				}
			}
			if len(out) > 0 && out[len(out)-1] == "" {
				out = out[:len(out)-1]
			}
			s := strings.Join(out, "")
			got = &s
		}
		ok := (c.Err != nil) == (gerr != nil)
		if ok && c.Res != nil && got != nil && *c.Res != *got {
			ok = false
		}
		if ok && c.Err != nil && gerr.Error() != *c.Err {
			ok = false
		}
		if !ok {
			bad++
			if bad < 15 {
				gs, ge := "<nil>", "<nil>"
				if got != nil {
					gs = *got
				}
				if gerr != nil {
					ge = gerr.Error()
				}
				ps, pe := "<nil>", "<nil>"
				if c.Res != nil {
					ps = *c.Res
				}
				if c.Err != nil {
					pe = *c.Err
				}
				kw, _ := json.Marshal(c.Kw)
				t.Errorf("text %q kw %s:\n py %q err %q\n go %q err %q", c.Text, kw, ps, pe, gs, ge)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d/%d cases differ from Salt", bad, len(cases))
	}
}

// TestUnifiedDiffAgainstCPython replays difflib.unified_diff results from
// CPython 3.11 (testdata/difflib_cpython.json), long inputs included so
// that the autojunk heuristic is exercised.
func TestUnifiedDiffAgainstCPython(t *testing.T) {
	b, err := os.ReadFile("testdata/difflib_cpython.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		A, B []string
		D    string
	}
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		if got := strings.Join(UnifiedDiff(c.A, c.B, "\n"), ""); got != c.D {
			t.Errorf("case %d: a %q b %q\nwant %q\ngot  %q", i, c.A, c.B, c.D, got)
		}
	}
}
