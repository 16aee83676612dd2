package modules

import (
	"strings"

	"github.com/brinesalt/brine/state/ordered"
)

// PyRepr renders a value as Python's repr() does, for messages and
// test.arg_repr: strings in single quotes, None/True/False, lists in
// brackets, dicts in braces.
func PyRepr(v any) string {
	var b strings.Builder
	writeRepr(&b, v)
	return b.String()
}

func writeRepr(b *strings.Builder, v any) {
	switch x := v.(type) {
	case string:
		b.WriteString(quotePy(x))
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
		x.Range(func(k, val any) bool {
			if i > 0 {
				b.WriteString(", ")
			}
			i++
			writeRepr(b, k)
			b.WriteString(": ")
			writeRepr(b, val)
			return true
		})
		b.WriteByte('}')
	default:
		b.WriteString(ordered.KeyString(v))
	}
}

// quotePy quotes s as Python's repr(str): single quotes unless the
// string holds a single quote and no double quote.
func quotePy(s string) string {
	q := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		q = '"'
	}
	var b strings.Builder
	b.WriteByte(q)
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == rune(q):
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			b.WriteString(`\x`)
			const hex = "0123456789abcdef"
			b.WriteByte(hex[r>>4])
			b.WriteByte(hex[r&0xf])
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte(q)
	return b.String()
}
