package target

import (
	"math"
	"strings"
	"unicode"

	"github.com/brinesalt/brine/internal/ordered"
)

// pyLookup reads m[k] with Python's key equality, under which 1, 1.0 and
// True are the same dict key.
func pyLookup(m *ordered.Map, k any) (any, bool) {
	if v, ok := m.Get(k); ok {
		return v, true
	}
	for _, alt := range numericAliases(k) {
		if v, ok := m.Get(alt); ok {
			return v, true
		}
	}
	return nil, false
}

func numericAliases(k any) []any {
	var f float64
	switch x := k.(type) {
	case bool:
		if x {
			return []any{1, 1.0}
		}
		return []any{0, 0.0}
	case int:
		f = float64(x)
		if x == 0 || x == 1 {
			return []any{f, x == 1}
		}
		return []any{f}
	case float64:
		f = x
	default:
		return nil
	}
	if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return nil
	}
	i := int(f)
	if i == 0 || i == 1 {
		return []any{i, i == 1}
	}
	return []any{i}
}

// isPySpace reports whether r is whitespace for Python's str.split().
func isPySpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\v', '\f', '\r', 0x1c, 0x1d, 0x1e, 0x1f, 0x85:
		return true
	}
	return r > 0x85 && unicode.IsSpace(r)
}

// pyFields splits s as Python's str.split() with no argument, returning
// each word with its byte offset.
func pyFields(s string) (words []string, offs []int) {
	start := -1
	for i, r := range s {
		if isPySpace(r) {
			if start >= 0 {
				words, offs = append(words, s[start:i]), append(offs, start)
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		words, offs = append(words, s[start:]), append(offs, start)
	}
	return words, offs
}

// pyInt parses s as Python's int(str) does: surrounding whitespace, an
// optional sign and single underscores between digits.
func pyInt(s string) (int, bool) {
	s = strings.TrimFunc(s, isPySpace)
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if s == "" || s[0] == '_' || s[len(s)-1] == '_' || strings.Contains(s, "__") {
		return 0, false
	}
	n := 0
	for _, r := range s {
		if r == '_' {
			continue
		}
		d := digitValue(r)
		if d < 0 || n > (math.MaxInt-9)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	if neg {
		n = -n
	}
	return n, true
}

// digitValue returns the value of a Unicode decimal digit, as int()
// accepts them, or -1.
func digitValue(r rune) int {
	if r >= '0' && r <= '9' {
		return int(r - '0')
	}
	if !unicode.Is(unicode.Nd, r) {
		return -1
	}
	// Decimal digits come in runs of ten starting at a zero; some runs
	// are adjacent (the mathematical digits), hence the modulo.
	start := r
	for unicode.Is(unicode.Nd, start-1) {
		start--
	}
	return int(r-start) % 10
}
