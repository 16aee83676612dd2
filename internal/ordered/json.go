package ordered

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
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
