package file

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzMode checks that mode strings from SLS files normalize to at least
// four characters without leading zeros beyond the padding, and that
// ParseMode never accepts more than the permission bits.
func FuzzMode(f *testing.F) {
	for _, s := range []string{"0644", "644", "0o750", "'0600'", "4755", "", "0", "keep", "\"0\"", "9999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, ok := NormalizeMode(s)
		if !ok || len(m) < 4 {
			t.Fatalf("NormalizeMode(%q) = %q, %v", s, m, ok)
		}
		if again, _ := NormalizeMode(m); again != m && !strings.Contains(m, "0o") {
			if strings.Trim(m, "\"'") == m {
				t.Fatalf("not idempotent: %q -> %q -> %q", s, m, again)
			}
		}
		if fm, err := ParseMode(s); err == nil && unixBits(fm) > 0o7777 {
			t.Fatalf("ParseMode(%q) = %o", s, fm)
		}
	})
}

// FuzzRegex runs Python patterns and replacement templates from SLS
// files through the translator and re.subn emulation: no panics, and a
// count limit is respected.
func FuzzRegex(f *testing.F) {
	f.Add(`^port=\d+$`, `port=8080`, "port=80\nhost=x\n", 0)
	f.Add(`(\w+)=(\w+)`, `\2=\1`, "a=b c=d", 1)
	f.Add(`(?P<k>\w+)`, `\g<k>\n`, "x y", 0)
	f.Add(`[]a]`, `\\`, "]a", 0)
	f.Add(`a\Z|(?i)B`, `\g<0>`, "ab", 2)
	f.Fuzz(func(t *testing.T, pat, repl, in string, count int) {
		if count < 0 || count > 8 {
			return
		}
		re, err := CompilePy(pat, reMultiline)
		if err != nil {
			return
		}
		parts, err := ParseRepl(re, repl)
		if err != nil {
			return
		}
		_, n := Subn(re, parts, []byte(in), count)
		if count > 0 && n > count {
			t.Fatalf("%d replacements with count %d", n, count)
		}
	})
}

// FuzzLine edits arbitrary text with file.line's _set_line logic: no
// panics, and the result keeps valid UTF-8 when the input had it.
func FuzzLine(f *testing.F) {
	f.Add("a\nb\n", "x", "^a$", "ensure", "")
	f.Add("a\n", "last", "", "insert", "end")
	f.Add("  k=1\n", "k=2", "k=", "replace", "")
	f.Add("", "x", "", "insert", "start")
	f.Fuzz(func(t *testing.T, text, content, expr, mode, location string) {
		lines := ReadLines(text)
		if n := len(lines); n > 0 && eol(lines[n-1]) != "" {
			lines = append(lines, "")
		}
		o := LineOpts{Content: &content, Match: &expr, After: &expr, Location: &location, Indent: true}
		if location == "" {
			o.Location = nil
		}
		out, err := setLine(lines, o, mode)
		if err != nil {
			return
		}
		joined := strings.Join(out, "")
		if utf8.ValidString(text) && utf8.ValidString(content) && !utf8.ValidString(joined) {
			t.Fatalf("invalid UTF-8 from %q", text)
		}
	})
}

// FuzzExtractHash reads hash files as file.managed's source_hash may
// point to: the returned digest always has a supported length.
func FuzzExtractHash(f *testing.F) {
	f.Add(strings.Repeat("a", 64)+"  app.tar\n", "app.tar", "")
	f.Add("SHA256 (app.tar) = "+strings.Repeat("b", 64), "/x/app.tar", "app.tar")
	f.Fuzz(func(t *testing.T, text, fileName, name string) {
		ht, hs, ok := ExtractHash(text, fileName, "https://example/"+fileName, name)
		if ok && (hashLen(ht) != len(hs) || ht == "") {
			t.Fatalf("ExtractHash = %q, %q", ht, hs)
		}
	})
}
