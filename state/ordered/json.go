package ordered

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// MarshalJSON writes the map as a JSON object in insertion order, with
// keys rendered by KeyString.
func (m *Map) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	var err error
	m.Range(func(k, v any) bool {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		var kb, vb []byte
		if kb, err = json.Marshal(KeyString(k)); err != nil {
			return false
		}
		if vb, err = json.Marshal(v); err != nil {
			return false
		}
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
		return true
	})
	if err != nil {
		return nil, err
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads a JSON object, keeping key order; nested values
// follow the package's value model (see DecodeJSON).
func (m *Map) UnmarshalJSON(data []byte) error {
	v, err := DecodeJSON(bytes.NewReader(data))
	if err != nil {
		return err
	}
	src, ok := v.(*Map)
	if !ok {
		return fmt.Errorf("decode ordered map: got %T, want an object", v)
	}
	*m = *src
	return nil
}

// DecodeJSON reads one JSON value into the package's value model: objects
// become *Map in document order, arrays []any, integral numbers int and
// other numbers float64.
func DecodeJSON(r io.Reader) (any, error) {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, fmt.Errorf("decode json: %w", err)
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			m := New()
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				m.Set(kt.(string), v)
			}
			_, err := dec.Token()
			return m, err
		case '[':
			list := []any{}
			for dec.More() {
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				list = append(list, v)
			}
			_, err := dec.Token()
			return list, err
		}
		return nil, fmt.Errorf("unexpected delimiter %v", t)
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return int(i), nil
		}
		return t.Float64()
	default:
		return t, nil // string, bool or nil
	}
}

// QuoteJSON is Python's json.dumps of a str: the escapes of
// py_encode_basestring, and with ascii (ensure_ascii) every rune beyond
// 0x7e as \uXXXX, astral runes as a UTF-16 surrogate pair.
func QuoteJSON(s string, ascii bool) string {
	var b strings.Builder
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
					r1, r2 := utf16Pair(r)
					b.WriteString(`\u` + hex4(r1) + `\u` + hex4(r2))
				} else {
					b.WriteString(`\u` + hex4(r))
				}
			default:
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

func hex4(r rune) string {
	s := strconv.FormatInt(int64(r), 16)
	return strings.Repeat("0", 4-len(s)) + s
}

func utf16Pair(r rune) (rune, rune) {
	r -= 0x10000
	return 0xd800 + (r>>10)&0x3ff, 0xdc00 + r&0x3ff
}
