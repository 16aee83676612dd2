package output

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/brinesalt/brine/state/ordered"
)

// Repr returns Python's repr() of a value: 'str', True/False/None, ints,
// floats as float.__repr__, [a, b] and {'k': v} in insertion order.
func Repr(v any) string {
	var b strings.Builder
	writeRepr(&b, v)
	return b.String()
}

// Str returns Python's str(): a string as itself, anything else as Repr.
func Str(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return Repr(v)
}

func writeRepr(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("None")
	case bool:
		if x {
			b.WriteString("True")
		} else {
			b.WriteString("False")
		}
	case int:
		b.WriteString(strconv.Itoa(x))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case float64:
		b.WriteString(ordered.FormatFloat(x))
	case string:
		b.WriteString(reprString(x))
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
		i := 0
		x.Range(func(k, v any) bool {
			if i > 0 {
				b.WriteString(", ")
			}
			i++
			writeRepr(b, k)
			b.WriteString(": ")
			writeRepr(b, v)
			return true
		})
		b.WriteByte('}')
	default:
		fmt.Fprintf(b, "%v", x)
	}
}

// reprString quotes s as Python's str.__repr__: single quotes unless the
// text has a single quote and no double quote; \t \n \r and the quote and
// backslash escaped; other non-printable characters as \xNN, \uNNNN or
// \UNNNNNNNN; printable non-ASCII kept.
func reprString(s string) string {
	quote := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		quote = '"'
	}
	var b strings.Builder
	b.WriteByte(quote)
	for _, r := range s {
		switch {
		case r == rune(quote) || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < ' ' || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r < 0x7f:
			b.WriteRune(r)
		case r == utf8.RuneError || unicode.IsPrint(r):
			b.WriteRune(r)
		case r <= 0xff:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
	}
	b.WriteByte(quote)
	return b.String()
}
