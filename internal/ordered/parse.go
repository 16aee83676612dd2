package ordered

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// ParseJSON reads one JSON document into the package's value model, as
// DecodeJSON does (objects as *Map in document order, arrays []any,
// integral numbers int and others float64, bad UTF-8 and lone
// surrogates as U+FFFD), about ten times faster: the job caches decode
// every stored load and return with it. Only whitespace may follow the
// document.
func ParseJSON(data []byte) (any, error) {
	p := parser{b: data}
	v, err := p.value(0)
	if err != nil {
		return nil, fmt.Errorf("decode json: %w", err)
	}
	p.space()
	if p.i != len(p.b) {
		return nil, fmt.Errorf("decode json: data after the document at offset %d", p.i)
	}
	return v, nil
}

// maxDepth bounds nesting, as encoding/json does (10,000).
const maxDepth = 10000

var errJSON = errors.New("invalid JSON")

type parser struct {
	b []byte
	i int
}

func (p *parser) fail(what string) error {
	return fmt.Errorf("%w: %s at offset %d", errJSON, what, p.i)
}

func (p *parser) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) value(depth int) (any, error) {
	if depth > maxDepth {
		return nil, p.fail("too deeply nested")
	}
	p.space()
	if p.i >= len(p.b) {
		return nil, p.fail("unexpected end")
	}
	switch c := p.b[p.i]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.array(depth)
	case c == '"':
		return p.str()
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	}
	for _, lit := range []struct {
		s string
		v any
	}{{"true", true}, {"false", false}, {"null", nil}} {
		if len(p.b)-p.i >= len(lit.s) && string(p.b[p.i:p.i+len(lit.s)]) == lit.s {
			p.i += len(lit.s)
			return lit.v, nil
		}
	}
	return nil, p.fail("unexpected character")
}

func (p *parser) object(depth int) (any, error) {
	p.i++ // {
	p.space()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		return New(), nil
	}
	// The pairs are gathered first so the map is made at its size once.
	var buf [16]any
	kv := buf[:0]
	done := func() *Map {
		m := NewSize(len(kv) / 2)
		for i := 0; i < len(kv); i += 2 {
			m.Set(kv[i], kv[i+1])
		}
		return m
	}
	for {
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != '"' {
			return nil, p.fail("expected a key")
		}
		k, err := p.str()
		if err != nil {
			return nil, err
		}
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return nil, p.fail("expected ':'")
		}
		p.i++
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		kv = append(kv, k, v)
		p.space()
		if p.i >= len(p.b) {
			return nil, p.fail("unexpected end")
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return done(), nil
		default:
			return nil, p.fail("expected ',' or '}'")
		}
	}
}

func (p *parser) array(depth int) (any, error) {
	p.i++ // [
	l := []any{}
	p.space()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		return l, nil
	}
	for {
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		l = append(l, v)
		p.space()
		if p.i >= len(p.b) {
			return nil, p.fail("unexpected end")
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return l, nil
		default:
			return nil, p.fail("expected ',' or ']'")
		}
	}
}

// number reads JSON's number grammar; like json.Number it is an int
// when it parses as one, else a float64.
func (p *parser) number() (any, error) {
	start := p.i
	if p.b[p.i] == '-' {
		p.i++
	}
	digits := func() int {
		n := 0
		for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
			p.i++
			n++
		}
		return n
	}
	if p.i < len(p.b) && p.b[p.i] == '0' {
		p.i++
	} else if digits() == 0 {
		return nil, p.fail("bad number")
	}
	integral := true
	if p.i < len(p.b) && p.b[p.i] == '.' {
		p.i++
		integral = false
		if digits() == 0 {
			return nil, p.fail("bad number")
		}
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.i++
		integral = false
		if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
			p.i++
		}
		if digits() == 0 {
			return nil, p.fail("bad number")
		}
	}
	s := string(p.b[start:p.i])
	if integral {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return int(n), nil
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, p.fail("number out of range")
	}
	return f, nil
}

// str reads a string, the quote at p.i.
func (p *parser) str() (string, error) {
	p.i++
	start := p.i
	for p.i < len(p.b) {
		c := p.b[p.i]
		if c == '"' {
			s := p.b[start:p.i]
			p.i++
			if utf8.Valid(s) {
				return string(s), nil
			}
			return string([]rune(string(s))), nil // bad bytes as U+FFFD
		}
		if c == '\\' || c < 0x20 {
			return p.slowStr(start)
		}
		p.i++
	}
	return "", p.fail("unterminated string")
}

// slowStr reads a string with escapes from start.
func (p *parser) slowStr(start int) (string, error) {
	out := make([]byte, 0, p.i-start+16)
	out = append(out, p.b[start:p.i]...)
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			if utf8.Valid(out) {
				return string(out), nil
			}
			return string([]rune(string(out))), nil
		case c < 0x20:
			return "", p.fail("control character in a string")
		case c != '\\':
			out = append(out, c)
			p.i++
			continue
		}
		if p.i+1 >= len(p.b) {
			return "", p.fail("unterminated escape")
		}
		e := p.b[p.i+1]
		p.i += 2
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := p.hex4()
			if !ok {
				return "", p.fail("bad \\u escape")
			}
			if utf16.IsSurrogate(r) {
				r2 := rune(-1)
				if p.i+1 < len(p.b) && p.b[p.i] == '\\' && p.b[p.i+1] == 'u' {
					save := p.i
					p.i += 2
					if x, ok := p.hex4(); ok {
						r2 = x
					} else {
						p.i = save
					}
					if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
						out = utf8.AppendRune(out, d)
						continue
					}
					p.i = save
				}
				r = utf8.RuneError
			}
			out = utf8.AppendRune(out, r)
		default:
			return "", p.fail("bad escape")
		}
	}
	return "", p.fail("unterminated string")
}

func (p *parser) hex4() (rune, bool) {
	if p.i+4 > len(p.b) {
		return 0, false
	}
	var r rune
	for _, c := range p.b[p.i : p.i+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c-'a') + 10
		case c >= 'A' && c <= 'F':
			r |= rune(c-'A') + 10
		default:
			return 0, false
		}
	}
	p.i += 4
	return r, true
}
