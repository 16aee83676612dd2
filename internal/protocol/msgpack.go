package protocol

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"sort"
	"time"
	"unicode/utf8"

	"github.com/brinesalt/brine/internal/ordered"
)

// Salt's msgpack extension type codes (salt/payload.py).
const (
	ExtDatetime int8 = 78
	ExtConstant int8 = 79
)

// datetimeLayout is Python's "%Y%m%dT%H:%M:%S.%f" in Go's notation.
const datetimeLayout = "20060102T15:04:05.000000"

// Constant is Salt's _Constant (salt/defaults/__init__.py), carried as
// extension 79: msgpack of the pair (name, value) packed with
// use_bin_type=True.
type Constant struct {
	Name  string
	Value any
}

// BinKey is a map key whose raw bytes are not valid UTF-8. Salt keeps such
// keys as bytes (salt/transport/frame.py decode_embedded_strs); Go cannot
// use []byte as a map key, so the bytes travel in a string of this type
// and are packed back as raw.
type BinKey string

// UintKey is a map key above math.MaxInt64. ordered.Map folds uint64
// keys onto int, which would change their value, so such keys keep this
// type.
type UintKey uint64

// Errors from the codec. A decode failure wraps ErrMalformed (Salt raises
// SaltDeserializationError for all of them).
var (
	ErrMalformed   = errors.New("malformed msgpack")
	ErrTooLarge    = errors.New("msgpack message too large")
	ErrUnsupported = errors.New("value cannot be packed")
)

// Marshal packs v as Salt's salt.payload.dumps does on the wire
// (use_bin_type=False): str and bytes are both "raw" (fixstr, str16,
// str32; never str8 or bin), integers take the smallest msgpack form,
// floats are float64, time.Time is extension 78 and Constant extension 79.
func Marshal(v any) ([]byte, error) { return appendValue(nil, v, false, 0) }

// MarshalBin packs v with use_bin_type=True, as Salt does for its IPC
// framing and events (salt/transport/frame.py, SaltEvent.pack): strings
// may use str8 and []byte is packed as bin.
func MarshalBin(v any) ([]byte, error) { return appendValue(nil, v, true, 0) }

const maxEncodeDepth = 1000

func appendValue(b []byte, v any, bin bool, depth int) ([]byte, error) {
	if depth > maxEncodeDepth {
		return nil, fmt.Errorf("pack: nesting deeper than %d: %w", maxEncodeDepth, ErrUnsupported)
	}
	switch x := v.(type) {
	case nil:
		return append(b, 0xc0), nil
	case bool:
		if x {
			return append(b, 0xc3), nil
		}
		return append(b, 0xc2), nil
	case int:
		return appendInt(b, int64(x)), nil
	case int8:
		return appendInt(b, int64(x)), nil
	case int16:
		return appendInt(b, int64(x)), nil
	case int32:
		return appendInt(b, int64(x)), nil
	case int64:
		return appendInt(b, x), nil
	case uint:
		return appendUint(b, uint64(x)), nil
	case uint8:
		return appendUint(b, uint64(x)), nil
	case uint16:
		return appendUint(b, uint64(x)), nil
	case uint32:
		return appendUint(b, uint64(x)), nil
	case uint64:
		return appendUint(b, x), nil
	case UintKey:
		return appendUint(b, uint64(x)), nil
	case *big.Int:
		// Salt turns integers msgpack cannot hold into their decimal text.
		if x.IsInt64() {
			return appendInt(b, x.Int64()), nil
		}
		if x.IsUint64() {
			return appendUint(b, x.Uint64()), nil
		}
		return appendRaw(b, []byte(x.String()), bin, false), nil
	case float32:
		return appendFloat(b, float64(x)), nil
	case float64:
		return appendFloat(b, x), nil
	case string:
		return appendRaw(b, []byte(x), bin, false), nil
	case BinKey:
		return appendRaw(b, []byte(x), bin, true), nil
	case []byte:
		return appendRaw(b, x, bin, true), nil
	case time.Time:
		return appendExt(b, ExtDatetime, []byte(x.Format(datetimeLayout))), nil
	case Constant:
		inner, err := appendValue(nil, []any{x.Name, x.Value}, true, depth+1)
		if err != nil {
			return nil, err
		}
		return appendExt(b, ExtConstant, inner), nil
	case *Constant:
		return appendValue(b, *x, bin, depth)
	case []any:
		b = appendArrayHeader(b, len(x))
		for _, e := range x {
			var err error
			if b, err = appendValue(b, e, bin, depth+1); err != nil {
				return nil, err
			}
		}
		return b, nil
	case []string:
		b = appendArrayHeader(b, len(x))
		for _, e := range x {
			b = appendRaw(b, []byte(e), bin, false)
		}
		return b, nil
	case *ordered.Map:
		return appendOrdered(b, x, bin, depth)
	case map[string]any:
		// A Go map has no order; sort for reproducible bytes.
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b = appendMapHeader(b, len(keys))
		for _, k := range keys {
			b = appendRaw(b, []byte(k), bin, false)
			var err error
			if b, err = appendValue(b, x[k], bin, depth+1); err != nil {
				return nil, err
			}
		}
		return b, nil
	case Marshaler:
		return appendValue(b, x.SaltMap(), bin, depth)
	}
	return nil, fmt.Errorf("pack %T: %w", v, ErrUnsupported)
}

// Marshaler is implemented by typed loads; SaltMap returns the load as the
// ordered map Salt would build, in Salt's key order.
type Marshaler interface {
	SaltMap() *ordered.Map
}

func appendOrdered(b []byte, m *ordered.Map, bin bool, depth int) ([]byte, error) {
	b = appendMapHeader(b, m.Len())
	var err error
	m.Range(func(k, v any) bool {
		if b, err = appendValue(b, k, bin, depth+1); err != nil {
			return false
		}
		b, err = appendValue(b, v, bin, depth+1)
		return err == nil
	})
	return b, err
}

func appendInt(b []byte, n int64) []byte {
	if n >= 0 {
		return appendUint(b, uint64(n))
	}
	switch {
	case n >= -32:
		return append(b, byte(n))
	case n >= math.MinInt8:
		return append(b, 0xd0, byte(n))
	case n >= math.MinInt16:
		return append(b, 0xd1, byte(n>>8), byte(n))
	case n >= math.MinInt32:
		return append(b, 0xd2, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	return appendBE(append(b, 0xd3), uint64(n), 8)
}

func appendUint(b []byte, n uint64) []byte {
	switch {
	case n < 0x80:
		return append(b, byte(n))
	case n <= math.MaxUint8:
		return append(b, 0xcc, byte(n))
	case n <= math.MaxUint16:
		return append(b, 0xcd, byte(n>>8), byte(n))
	case n <= math.MaxUint32:
		return appendBE(append(b, 0xce), n, 4)
	}
	return appendBE(append(b, 0xcf), n, 8)
}

func appendBE(b []byte, n uint64, size int) []byte {
	for i := size - 1; i >= 0; i-- {
		b = append(b, byte(n>>(8*i)))
	}
	return b
}

func appendFloat(b []byte, f float64) []byte {
	return appendBE(append(b, 0xcb), math.Float64bits(f), 8)
}

// appendRaw writes a string or bytes. With bin false (the wire) both are
// old-spec raw, which has no 8-bit length form; with bin true strings may
// use str8 and bytes are bin (msgpack-python's Packer).
func appendRaw(b, s []byte, bin, isBytes bool) []byte {
	n := len(s)
	switch {
	case bin && isBytes:
		switch {
		case n <= math.MaxUint8:
			b = append(b, 0xc4, byte(n))
		case n <= math.MaxUint16:
			b = append(b, 0xc5, byte(n>>8), byte(n))
		default:
			b = appendBE(append(b, 0xc6), uint64(n), 4)
		}
	case n <= 31:
		b = append(b, 0xa0|byte(n))
	case bin && n <= math.MaxUint8:
		b = append(b, 0xd9, byte(n))
	case n <= math.MaxUint16:
		b = append(b, 0xda, byte(n>>8), byte(n))
	default:
		b = appendBE(append(b, 0xdb), uint64(n), 4)
	}
	return append(b, s...)
}

func appendArrayHeader(b []byte, n int) []byte {
	switch {
	case n <= 15:
		return append(b, 0x90|byte(n))
	case n <= math.MaxUint16:
		return append(b, 0xdc, byte(n>>8), byte(n))
	}
	return appendBE(append(b, 0xdd), uint64(n), 4)
}

func appendMapHeader(b []byte, n int) []byte {
	switch {
	case n <= 15:
		return append(b, 0x80|byte(n))
	case n <= math.MaxUint16:
		return append(b, 0xde, byte(n>>8), byte(n))
	}
	return appendBE(append(b, 0xdf), uint64(n), 4)
}

func appendExt(b []byte, code int8, data []byte) []byte {
	n := len(data)
	switch n {
	case 1:
		b = append(b, 0xd4)
	case 2:
		b = append(b, 0xd5)
	case 4:
		b = append(b, 0xd6)
	case 8:
		b = append(b, 0xd7)
	case 16:
		b = append(b, 0xd8)
	default:
		switch {
		case n <= math.MaxUint8:
			b = append(b, 0xc7, byte(n))
		case n <= math.MaxUint16:
			b = append(b, 0xc8, byte(n>>8), byte(n))
		default:
			b = appendBE(append(b, 0xc9), uint64(n), 4)
		}
	}
	b = append(b, byte(code))
	return append(b, data...)
}

// AsBytes returns the bytes of a decoded raw value, which Salt's decoding
// leaves as str when it happens to be valid UTF-8 and bytes otherwise.
func AsBytes(v any) ([]byte, bool) {
	switch x := v.(type) {
	case []byte:
		return x, true
	case string:
		return []byte(x), true
	case BinKey:
		return []byte(x), true
	}
	return nil, false
}

// AsString returns a decoded text value; bytes that are not UTF-8 are not
// text.
func AsString(v any) (string, bool) {
	s, ok := v.(string)
	return s, ok
}

// AsInt returns an integer value.
func AsInt(v any) (int, bool) {
	switch x := v.(type) {
	case int:
		return x, true
	case int64:
		return int(x), true
	case uint64:
		if x <= math.MaxInt {
			return int(x), true
		}
	}
	return 0, false
}

func validText(b []byte) bool { return utf8.Valid(b) }
