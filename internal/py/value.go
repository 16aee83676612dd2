package py

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Dict is what this package needs of an insertion-ordered mapping (a
// Python 3 dict): its size and its items in order. The project's map type
// satisfies it; Range stops when fn returns false.
type Dict interface {
	Len() int
	Range(fn func(k, v any) bool)
}

// Reprer is a value that knows its own Python repr(), for types a caller
// adds to the value model.
type Reprer interface {
	PyRepr() string
}

// TypeName is type(v).__name__ for the value model: NoneType, bool, int,
// float, str, list, dict; "object" for anything else.
func TypeName(v any) string {
	switch v.(type) {
	case nil:
		return "NoneType"
	case bool:
		return "bool"
	case int, int64:
		return "int"
	case float64:
		return "float"
	case string:
		return "str"
	case []any:
		return "list"
	case Dict:
		return "dict"
	}
	return "object"
}

// Str is Python's str(v): a string as itself, None, True and False by
// name, numbers as repr, containers as repr.
func Str(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return Repr(v)
}

// Repr is Python's repr(v): strings quoted as str.__repr__, floats as
// float.__repr__, lists and dicts in brackets and braces with their
// items in order, and a dict that contains itself as {...}.
func Repr(v any) string {
	var b strings.Builder
	writeRepr(&b, v, nil)
	return b.String()
}

func writeRepr(b *strings.Builder, v any, seen []Dict) {
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
		b.WriteString(FormatFloat(x))
	case string:
		b.WriteString(QuoteString(x))
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, e, seen)
		}
		b.WriteByte(']')
	case Dict:
		writeDict(b, x, seen)
	case Reprer:
		b.WriteString(x.PyRepr())
	default:
		fmt.Fprint(b, x)
	}
}

func writeDict(b *strings.Builder, d Dict, seen []Dict) {
	for _, s := range seen {
		if s == d {
			b.WriteString("{...}")
			return
		}
	}
	seen = append(seen, d)
	WriteDict(b, d, func(v any) { writeRepr(b, v, seen) })
}

// WriteDict writes d as dict.__repr__ lays it out, {k: v, k2: v2}, with
// each key and value written by elem. A caller whose values include types
// of its own (Jinja's lists and tuples) passes an elem that writes them;
// guarding against a dict that contains itself, which Python prints as
// {...}, is then the caller's too.
func WriteDict(b *strings.Builder, d Dict, elem func(v any)) {
	b.WriteByte('{')
	i := 0
	d.Range(func(k, v any) bool {
		if i > 0 {
			b.WriteString(", ")
		}
		i++
		elem(k)
		b.WriteString(": ")
		elem(v)
		return true
	})
	b.WriteByte('}')
}

// QuoteString is str.__repr__: single quotes unless the text holds a
// single quote and no double quote; the quote, backslash, \t, \n and \r
// escaped; other characters Python does not count as printable as \xNN,
// \uNNNN or \UNNNNNNNN; printable non-ASCII characters kept.
func QuoteString(s string) string {
	quote := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		quote = '"'
	}
	var b strings.Builder
	b.Grow(len(s) + 2)
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
			// Go's IsPrint is Python's isprintable() for non-ASCII:
			// letters, marks, numbers, punctuation and symbols, but no
			// separators or format characters.
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

// FormatFloat is float.__repr__: the shortest digits that read back as
// f, positional for exponents from -4 to 15 (with ".0" when whole),
// otherwise with an exponent of at least two digits (1e+16, 1e-05); inf,
// -inf and nan by name.
func FormatFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64)
	i := strings.IndexByte(e, 'e')
	exp, _ := strconv.Atoi(e[i+1:])
	if exp >= -4 && exp < 16 {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.ContainsAny(s, ".") {
			s += ".0"
		}
		return s
	}
	mant, sign, digits := e[:i], e[i+1], e[i+2:]
	if len(digits) < 2 {
		digits = "0" + digits
	}
	return mant + "e" + string(sign) + digits
}

// Truthy is Python's bool(v) over the value model: None, False, zero,
// and empty strings, lists and dicts are false.
func Truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case int:
		return x != 0
	case int64:
		return x != 0
	case uint64:
		return x != 0
	case float64:
		return x != 0
	case string:
		return x != ""
	case []any:
		return len(x) > 0
	case Dict:
		return x.Len() > 0
	}
	return true
}
