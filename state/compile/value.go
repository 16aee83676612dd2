package compile

import (
	"regexp"
	"strings"
	"sync"

	"github.com/brinesalt/brine/internal/ordered"
)

var (
	fnCache   sync.Map
	fnSpecial = "*?["
)

// Fnmatch reports whether name matches the shell pattern pat as Python's
// fnmatch.fnmatch does on POSIX: `*` and `?` match any character
// including `/`, `[seq]` and `[!seq]` are character classes, and the
// match is case-sensitive.
func Fnmatch(name, pat string) bool {
	if !strings.ContainsAny(pat, fnSpecial) {
		return name == pat
	}
	re, ok := fnCache.Load(pat)
	if !ok {
		re = regexp.MustCompile(translate(pat))
		fnCache.Store(pat, re)
	}
	return re.(*regexp.Regexp).MatchString(name)
}

// translate converts a shell pattern to a regexp (Python's fnmatch.translate).
func translate(pat string) string {
	var b strings.Builder
	b.WriteString(`(?s)^`)
	rs := []rune(pat)
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		switch c {
		case '*':
			b.WriteString(`.*`)
		case '?':
			b.WriteString(`.`)
		case '[':
			j := i + 1
			if j < len(rs) && rs[j] == '!' {
				j++
			}
			if j < len(rs) && rs[j] == ']' {
				j++
			}
			for j < len(rs) && rs[j] != ']' {
				j++
			}
			if j >= len(rs) {
				b.WriteString(`\[`)
				continue
			}
			stuff := string(rs[i+1 : j])
			i = j
			stuff = strings.ReplaceAll(stuff, `\`, `\\`)
			if strings.HasPrefix(stuff, "!") {
				stuff = "^" + stuff[1:]
			} else if strings.HasPrefix(stuff, "^") {
				stuff = `\` + stuff
			}
			b.WriteString("[" + stuff + "]")
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString(`$`)
	return b.String()
}

// Filter returns the names that match pat, in order (fnmatch.filter).
func Filter(names []string, pat string) []string {
	var out []string
	for _, n := range names {
		if Fnmatch(n, pat) {
			out = append(out, n)
		}
	}
	return out
}

// first returns the first key and value of a one-key mapping.
func first(m *ordered.Map) (string, any, bool) {
	if m.Len() == 0 {
		return "", nil, false
	}
	k := m.Keys()[0]
	ks, ok := k.(string)
	if !ok {
		ks = ordered.KeyString(k)
	}
	return ks, m.Value(k), true
}

// First returns the first key (as a string) and value of m.
func First(m *ordered.Map) (string, any, bool) { return first(m) }

// str renders a scalar as Python's str() does.
func str(v any) string { return ordered.KeyString(v) }
