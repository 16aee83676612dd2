package protocol

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
)

// Decoding limits. Salt itself has none beyond memory; Brine refuses
// oversize input before allocating for it.
const (
	// DefaultMaxSize bounds a message handed to Unmarshal.
	DefaultMaxSize = 64 << 20
	// DefaultMaxDepth bounds container nesting.
	DefaultMaxDepth = 512
)

// Decoder holds decoding options; the zero value uses the defaults and
// Salt's text handling.
type Decoder struct {
	// MaxSize is the largest message accepted (0: DefaultMaxSize).
	MaxSize int
	// MaxDepth is the deepest nesting accepted (0: DefaultMaxDepth).
	MaxDepth int
	// Raw keeps every raw as []byte (Salt's loads(raw=True)); otherwise
	// raws that are valid UTF-8 become string (decode_embedded_strs).
	Raw bool
	// BinType decodes data packed with use_bin_type=True as Salt reads its
	// IPC frames and events (loads(encoding="utf-8")): str must be UTF-8
	// and stays text, bin stays bytes.
	BinType bool
}

// Unmarshal decodes one msgpack value as salt.payload.loads does: raws are
// read as bytes, then turned into text where they are valid UTF-8; maps
// become *ordered.Map; extension 78 becomes time.Time (UTC), 79 Constant,
// and any other extension its data. Trailing bytes are an error, as with
// msgpack.unpackb.
func Unmarshal(data []byte) (any, error) { return Decoder{}.Unmarshal(data) }

// Unmarshal decodes data with d's options.
func (d Decoder) Unmarshal(data []byte) (any, error) {
	max := d.MaxSize
	if max <= 0 {
		max = DefaultMaxSize
	}
	if len(data) > max {
		return nil, fmt.Errorf("unpack %d bytes (limit %d): %w", len(data), max, ErrTooLarge)
	}
	depth := d.MaxDepth
	if depth <= 0 {
		depth = DefaultMaxDepth
	}
	r := &reader{buf: data, raw: d.Raw, binText: d.BinType, maxDepth: depth}
	v, err := r.value(0)
	if err != nil {
		return nil, err
	}
	if r.pos != len(r.buf) {
		return nil, r.fail("%d bytes of extra data", len(r.buf)-r.pos)
	}
	return v, nil
}

type reader struct {
	buf      []byte
	pos      int
	raw      bool
	binText  bool // inside extension 79: str is text, bin is bytes
	maxDepth int
}

func (r *reader) fail(format string, args ...any) error {
	return fmt.Errorf("unpack at byte %d: %s: %w", r.pos, fmt.Sprintf(format, args...), ErrMalformed)
}

func (r *reader) take(n int) ([]byte, error) {
	if n < 0 || n > len(r.buf)-r.pos {
		return nil, r.fail("truncated: need %d bytes", n)
	}
	b := r.buf[r.pos : r.pos+n]
	r.pos += n
	return b, nil
}

func (r *reader) uint(size int) (uint64, error) {
	b, err := r.take(size)
	if err != nil {
		return 0, err
	}
	var n uint64
	for _, c := range b {
		n = n<<8 | uint64(c)
	}
	return n, nil
}

// length reads a size field and checks that at least min(n, per) bytes
// could follow, so a forged count cannot force a large allocation.
func (r *reader) length(size, per int) (int, error) {
	n, err := r.uint(size)
	if err != nil {
		return 0, err
	}
	if n > uint64(len(r.buf)-r.pos)/uint64(per) {
		return 0, r.fail("length %d exceeds the remaining input", n)
	}
	return int(n), nil
}

func (r *reader) value(depth int) (any, error) {
	if depth > r.maxDepth {
		return nil, r.fail("nesting deeper than %d", r.maxDepth)
	}
	c, err := r.take(1)
	if err != nil {
		return nil, err
	}
	t := c[0]
	switch {
	case t <= 0x7f:
		return int(t), nil
	case t >= 0xe0:
		return int(int8(t)), nil
	case t&0xf0 == 0x80:
		return r.mapN(int(t&0x0f), depth)
	case t&0xf0 == 0x90:
		return r.arrayN(int(t&0x0f), depth)
	case t&0xe0 == 0xa0:
		return r.rawN(int(t&0x1f), false)
	}
	switch t {
	case 0xc0:
		return nil, nil
	case 0xc2:
		return false, nil
	case 0xc3:
		return true, nil
	case 0xc4, 0xc5, 0xc6:
		n, err := r.length(1<<(t-0xc4), 1)
		if err != nil {
			return nil, err
		}
		return r.rawN(n, true)
	case 0xc7, 0xc8, 0xc9:
		n, err := r.length(1<<(t-0xc7), 1)
		if err != nil {
			return nil, err
		}
		return r.ext(n)
	case 0xca:
		n, err := r.uint(4)
		return float64(math.Float32frombits(uint32(n))), err
	case 0xcb:
		n, err := r.uint(8)
		return math.Float64frombits(n), err
	case 0xcc, 0xcd, 0xce, 0xcf:
		n, err := r.uint(1 << (t - 0xcc))
		if err != nil {
			return nil, err
		}
		if n > math.MaxInt64 {
			return n, nil
		}
		return int(n), nil
	case 0xd0, 0xd1, 0xd2, 0xd3:
		size := 1 << (t - 0xd0)
		n, err := r.uint(size)
		if err != nil {
			return nil, err
		}
		shift := 64 - 8*size
		return int(int64(n<<shift) >> shift), nil
	case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8:
		return r.ext(1 << (t - 0xd4))
	case 0xd9, 0xda, 0xdb:
		n, err := r.length(1<<(t-0xd9), 1)
		if err != nil {
			return nil, err
		}
		return r.rawN(n, false)
	case 0xdc, 0xdd:
		n, err := r.length(2<<(t-0xdc), 1)
		if err != nil {
			return nil, err
		}
		return r.arrayN(n, depth)
	case 0xde, 0xdf:
		n, err := r.length(2<<(t-0xde), 2)
		if err != nil {
			return nil, err
		}
		return r.mapN(n, depth)
	}
	r.pos--
	return nil, r.fail("invalid type byte 0x%02x", t)
}

// rawN returns a str or bin of n bytes. Outside extension 79 both are
// Salt's "raw": text when valid UTF-8 (unless Raw), else bytes.
func (r *reader) rawN(n int, isBin bool) (any, error) {
	b, err := r.take(n)
	if err != nil {
		return nil, err
	}
	cp := append([]byte(nil), b...)
	if r.binText {
		if isBin {
			return cp, nil
		}
		if !validText(cp) {
			return nil, r.fail("invalid UTF-8 in str")
		}
		return string(cp), nil
	}
	if !r.raw && validText(cp) {
		return string(cp), nil
	}
	return cp, nil
}

func (r *reader) arrayN(n, depth int) (any, error) {
	out := make([]any, 0, n)
	for range n {
		v, err := r.value(depth + 1)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func (r *reader) mapN(n, depth int) (any, error) {
	m := ordered.New()
	for range n {
		k, err := r.value(depth + 1)
		if err != nil {
			return nil, err
		}
		key, err := r.mapKey(k)
		if err != nil {
			return nil, err
		}
		v, err := r.value(depth + 1)
		if err != nil {
			return nil, err
		}
		m.Set(key, v)
	}
	return m, nil
}

// mapKey accepts the keys Python can hash; lists and maps are rejected as
// msgpack-python rejects them ("unhashable type").
func (r *reader) mapKey(k any) (any, error) {
	switch x := k.(type) {
	case float64:
		// A NaN never equals itself, so a Go map cannot hold it as a
		// key; Brine refuses what Python would accept here.
		if x != x {
			return nil, r.fail("NaN map key")
		}
		return k, nil
	case nil, bool, int, string, time.Time:
		return k, nil
	case uint64:
		return UintKey(x), nil
	case []byte:
		return BinKey(x), nil
	}
	return nil, r.fail("unhashable map key of type %T", k)
}

func (r *reader) ext(n int) (any, error) {
	c, err := r.take(1)
	if err != nil {
		return nil, err
	}
	data, err := r.take(n)
	if err != nil {
		return nil, err
	}
	switch int8(c[0]) {
	case ExtDatetime:
		t, err := parseDatetime(string(data))
		if err != nil {
			return nil, r.fail("extension 78: %v", err)
		}
		return t, nil
	case ExtConstant:
		inner := &reader{buf: data, binText: true, maxDepth: r.maxDepth}
		v, err := inner.value(0)
		if err == nil && inner.pos != len(data) {
			err = inner.fail("extra data")
		}
		if err != nil {
			return nil, r.fail("extension 79: %v", err)
		}
		pair, ok := v.([]any)
		if !ok || len(pair) != 2 {
			return nil, r.fail("extension 79: want a (name, value) pair")
		}
		name, ok := pair[0].(string)
		if !ok {
			return nil, r.fail("extension 79: name is %T, not text", pair[0])
		}
		return Constant{Name: name, Value: pair[1]}, nil
	}
	// Salt's ext_hook returns the data of other extensions, which the
	// embedded-string pass then turns into text when it can.
	cp := append([]byte(nil), data...)
	if !r.raw && !r.binText && validText(cp) {
		return string(cp), nil
	}
	return cp, nil
}

// parseDatetime reads Python's "%Y%m%dT%H:%M:%S.%f" as strptime does for
// Salt's own output: fixed-width fields and 1 to 6 fraction digits.
func parseDatetime(s string) (time.Time, error) {
	if len(s) < 19 || len(s) > 24 || s[8] != 'T' || s[11] != ':' || s[14] != ':' || s[17] != '.' {
		return time.Time{}, fmt.Errorf("time data %q does not match format", s)
	}
	num := func(part string) (int, bool) {
		for _, c := range part {
			if c < '0' || c > '9' {
				return 0, false
			}
		}
		n, err := strconv.Atoi(part)
		return n, err == nil
	}
	y, ok1 := num(s[0:4])
	mo, ok2 := num(s[4:6])
	d, ok3 := num(s[6:8])
	h, ok4 := num(s[9:11])
	mi, ok5 := num(s[12:14])
	se, ok6 := num(s[15:17])
	frac := s[18:]
	f, ok7 := num(frac)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && ok7) {
		return time.Time{}, fmt.Errorf("time data %q does not match format", s)
	}
	for range 6 - len(frac) {
		f *= 10
	}
	t := time.Date(y, time.Month(mo), d, h, mi, se, f*1000, time.UTC)
	if t.Year() != y || int(t.Month()) != mo || t.Day() != d || h > 23 || mi > 59 || se > 59 || y < 1 {
		return time.Time{}, fmt.Errorf("time data %q is not a valid date", s)
	}
	return t, nil
}
