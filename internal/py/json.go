package py

import (
	"errors"
	"math"
	"strconv"
	"strings"
)

// JSONOptions are the json.dumps arguments Salt uses.
type JSONOptions struct {
	// Indent is indent=: a negative value is indent=None (one line with
	// ", " and ": " between items), 0 puts each item on a line of its own.
	Indent int
	// SortKeys is sort_keys=True.
	SortKeys bool
	// EnsureASCII is ensure_ascii=True: every character past 0x7e as
	// \uXXXX.
	EnsureASCII bool
}

// ErrUnsortable is json.dumps(sort_keys=True)'s TypeError for a dict
// whose keys are of kinds that do not compare.
var ErrUnsortable = errors.New("keys of mixed types cannot be sorted")

// JSON is json.dumps(v, indent=…, sort_keys=…, ensure_ascii=…,
// default=repr): floats as float.__repr__, NaN and Infinity bare, keys
// True, None and floats converted as json does, anything outside the
// value model as the JSON string of its repr().
func JSON(v any, o JSONOptions) (string, error) {
	e := jsonEncoder{JSONOptions: o}
	if err := e.encode(v, 0); err != nil {
		return "", err
	}
	return e.b.String(), nil
}

type jsonEncoder struct {
	JSONOptions
	b strings.Builder
}

func (e *jsonEncoder) newline(level int) {
	if e.Indent < 0 {
		return
	}
	e.b.WriteByte('\n')
	e.b.WriteString(strings.Repeat(" ", e.Indent*level))
}

func (e *jsonEncoder) sep() {
	if e.Indent < 0 {
		e.b.WriteString(", ")
	} else {
		e.b.WriteByte(',')
	}
}

func (e *jsonEncoder) encode(v any, level int) error {
	switch x := v.(type) {
	case nil:
		e.b.WriteString("null")
	case bool:
		e.b.WriteString(strconv.FormatBool(x))
	case int:
		e.b.WriteString(strconv.Itoa(x))
	case int64:
		e.b.WriteString(strconv.FormatInt(x, 10))
	case float64:
		e.b.WriteString(jsonFloat(x))
	case string:
		e.b.WriteString(QuoteJSON(x, e.EnsureASCII))
	case []any:
		if len(x) == 0 {
			e.b.WriteString("[]")
			return nil
		}
		e.b.WriteByte('[')
		for i, el := range x {
			if i > 0 {
				e.sep()
			}
			e.newline(level + 1)
			if err := e.encode(el, level+1); err != nil {
				return err
			}
		}
		e.newline(level)
		e.b.WriteByte(']')
	case Dict:
		return e.object(x, level)
	default:
		e.b.WriteString(QuoteJSON(Repr(x), e.EnsureASCII))
	}
	return nil
}

func (e *jsonEncoder) object(d Dict, level int) error {
	if d.Len() == 0 {
		e.b.WriteString("{}")
		return nil
	}
	items := Items(d)
	if e.SortKeys {
		var ok bool
		if items, ok = SortedItems(d, false); !ok {
			return ErrUnsortable
		}
	}
	e.b.WriteByte('{')
	for i, it := range items {
		if i > 0 {
			e.sep()
		}
		e.newline(level + 1)
		e.b.WriteString(QuoteJSON(jsonKey(it.Key), e.EnsureASCII))
		e.b.WriteString(": ")
		if err := e.encode(it.Value, level+1); err != nil {
			return err
		}
	}
	e.newline(level)
	e.b.WriteByte('}')
	return nil
}

// jsonKey converts a key as json.dumps does: True is "true", None
// "null", floats as JSON writes them.
func jsonKey(k any) string {
	switch x := k.(type) {
	case bool:
		return strconv.FormatBool(x)
	case nil:
		return "null"
	case float64:
		return jsonFloat(x)
	}
	return Str(k)
}

func jsonFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return FormatFloat(f)
}

// QuoteJSON is json.dumps of a str: the escapes of py_encode_basestring,
// and with ascii (ensure_ascii) every character past 0x7e as \uXXXX,
// astral ones as a UTF-16 surrogate pair.
func QuoteJSON(s string, ascii bool) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			switch {
			case r < 0x20 || (ascii && r > 0x7e):
				if r > 0xffff {
					r -= 0x10000
					writeHex4(&b, 0xd800+(r>>10)&0x3ff)
					writeHex4(&b, 0xdc00+r&0x3ff)
				} else {
					writeHex4(&b, r)
				}
			default:
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

func writeHex4(b *strings.Builder, r rune) {
	const hex = "0123456789abcdef"
	b.WriteString(`\u`)
	for shift := 12; shift >= 0; shift -= 4 {
		b.WriteByte(hex[(r>>shift)&0xf])
	}
}
