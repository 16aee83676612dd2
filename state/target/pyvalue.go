package target

import (
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/brinesalt/brine/state/ordered"
)

// pyStr renders v as Python's str() would; subdict_match compares grain
// and pillar values through str(value).lower().
func pyStr(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return pyRepr(v)
}

// pyRepr renders v as Python's repr().
func pyRepr(v any) string {
	var b strings.Builder
	writeRepr(&b, v)
	return b.String()
}

func writeRepr(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil, bool, int, float64:
		b.WriteString(ordered.KeyString(x))
	case string:
		writeStrRepr(b, x)
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, e)
		}
		b.WriteByte(']')
	case *ordered.Map:
		b.WriteByte('{')
		first := true
		x.Range(func(k, v any) bool {
			if !first {
				b.WriteString(", ")
			}
			first = false
			writeRepr(b, k)
			b.WriteString(": ")
			writeRepr(b, v)
			return true
		})
		b.WriteByte('}')
	default:
		b.WriteString(ordered.KeyString(x))
	}
}

// writeStrRepr quotes s as Python's str.__repr__ does.
func writeStrRepr(b *strings.Builder, s string) {
	q := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		q = '"'
	}
	b.WriteByte(q)
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == rune(q):
			b.WriteByte('\\')
			b.WriteByte(q)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == ' ' || (r < utf8.RuneSelf && r >= 0x20 && r != 0x7f) || (r >= utf8.RuneSelf && unicode.IsPrint(r)):
			b.WriteRune(r)
		case r < 0x100:
			b.WriteString(`\x` + pad(strconv.FormatInt(int64(r), 16), 2))
		case r < 0x10000:
			b.WriteString(`\u` + pad(strconv.FormatInt(int64(r), 16), 4))
		default:
			b.WriteString(`\U` + pad(strconv.FormatInt(int64(r), 16), 8))
		}
	}
	b.WriteByte(q)
}

func pad(s string, n int) string {
	for len(s) < n {
		s = "0" + s
	}
	return s
}

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

// pyEqual is Python's == on the value model.
func pyEqual(a, b any) bool {
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		return ok && x == y
	case nil:
		return b == nil
	case bool, int, float64:
		fa, oka := pyNumber(a)
		fb, okb := pyNumber(b)
		return oka && okb && fa == fb
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !pyEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case *ordered.Map:
		y, ok := b.(*ordered.Map)
		if !ok || x.Len() != y.Len() {
			return false
		}
		eq := true
		x.Range(func(k, v any) bool {
			w, ok := pyLookup(y, k)
			eq = ok && pyEqual(v, w)
			return eq
		})
		return eq
	}
	return false
}

func pyNumber(v any) (float64, bool) {
	switch x := v.(type) {
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	case int:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
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
