package protocol

import (
	"fmt"

	"github.com/brinesalt/brine/internal/ordered"
)

// UnmarshalMapOmitting decodes a msgpack map as Unmarshal does, except
// that the values under the top-level text keys in omit are stepped
// over unbuilt (their encoding is checked only for sizes, nesting and
// truncation) and left out of the answer. A reader that wants a few
// keys of a large load (jobs.list_jobs reading a runner job's .load.p,
// whose "return" is that runner's whole answer) saves building the
// rest. Anything but a map is ErrMalformed.
func (d Decoder) UnmarshalMapOmitting(data []byte, omit ...string) (*ordered.Map, error) {
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
	n, ok, err := r.mapHeader()
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, r.fail("not a map")
	}
	m := ordered.New()
	for range n {
		k, err := r.value(1)
		if err != nil {
			return nil, err
		}
		key, err := r.mapKey(k)
		if err != nil {
			return nil, err
		}
		if s, isText := key.(string); isText && contains(omit, s) {
			if err := r.skip(1); err != nil {
				return nil, err
			}
			continue
		}
		v, err := r.value(1)
		if err != nil {
			return nil, err
		}
		m.Set(key, v)
	}
	if r.pos != len(r.buf) {
		return nil, r.fail("%d bytes of extra data", len(r.buf)-r.pos)
	}
	return m, nil
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// mapHeader reads a map's header: its size, or ok false (nothing read)
// when the next value is not a map.
func (r *reader) mapHeader() (n int, ok bool, err error) {
	if r.pos >= len(r.buf) {
		return 0, false, r.fail("truncated: need 1 bytes")
	}
	switch t := r.buf[r.pos]; {
	case t&0xf0 == 0x80:
		r.pos++
		return int(t & 0x0f), true, nil
	case t == 0xde || t == 0xdf:
		r.pos++
		n, err := r.length(2<<(t-0xde), 2)
		return n, err == nil, err
	}
	return 0, false, nil
}

// skip steps over one value without building it.
func (r *reader) skip(depth int) error {
	if depth > r.maxDepth {
		return r.fail("nesting deeper than %d", r.maxDepth)
	}
	c, err := r.take(1)
	if err != nil {
		return err
	}
	t := c[0]
	n, per := 0, 0 // a container of n elements, per values each
	switch {
	case t <= 0x7f || t >= 0xe0:
		return nil
	case t&0xf0 == 0x80:
		n, per = int(t&0x0f), 2
	case t&0xf0 == 0x90:
		n, per = int(t&0x0f), 1
	case t&0xe0 == 0xa0:
		_, err = r.take(int(t & 0x1f))
		return err
	case t == 0xc0 || t == 0xc2 || t == 0xc3:
		return nil
	case t >= 0xc4 && t <= 0xc6:
		return r.skipSized(1 << (t - 0xc4))
	case t >= 0xc7 && t <= 0xc9:
		if n, err = r.length(1<<(t-0xc7), 1); err == nil {
			_, err = r.take(n + 1)
		}
		return err
	case t == 0xca:
		_, err = r.take(4)
		return err
	case t == 0xcb:
		_, err = r.take(8)
		return err
	case t >= 0xcc && t <= 0xcf:
		_, err = r.take(1 << (t - 0xcc))
		return err
	case t >= 0xd0 && t <= 0xd3:
		_, err = r.take(1 << (t - 0xd0))
		return err
	case t >= 0xd4 && t <= 0xd8:
		_, err = r.take(1 + 1<<(t-0xd4))
		return err
	case t >= 0xd9 && t <= 0xdb:
		return r.skipSized(1 << (t - 0xd9))
	case t == 0xdc || t == 0xdd:
		if n, err = r.length(2<<(t-0xdc), 1); err != nil {
			return err
		}
		per = 1
	case t == 0xde || t == 0xdf:
		if n, err = r.length(2<<(t-0xde), 2); err != nil {
			return err
		}
		per = 2
	default:
		r.pos--
		return r.fail("invalid type byte 0x%02x", t)
	}
	for range n * per {
		if err := r.skip(depth + 1); err != nil {
			return err
		}
	}
	return nil
}

// skipSized steps over a str or bin whose length field is size bytes.
func (r *reader) skipSized(size int) error {
	n, err := r.length(size, 1)
	if err == nil {
		_, err = r.take(n)
	}
	return err
}
