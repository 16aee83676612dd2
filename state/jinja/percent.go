package jinja

import (
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
)

// percentFormat implements Python's "fmt % args" (printf-style).
func percentFormat(r *runner, format string, arg any) (any, error) {
	p := newPercentParser(format, arg)
	var b strings.Builder
	for p.i < len(format) {
		c := format[p.i]
		p.i++
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		s, err := p.directive(r)
		if err != nil {
			return nil, err
		}
		b.WriteString(s)
	}
	_, isList := arg.(*pyList)
	if p.next < len(p.args) && p.mapping == nil && !p.usedMap && !isList {
		return nil, typeErr("not all arguments converted during string formatting")
	}
	return b.String(), nil
}

// percentParser walks a printf-style format: i is the next byte of
// format, next the next positional argument to take.
type percentParser struct {
	format  string
	i       int
	args    []any
	next    int
	mapping *ordered.Map
	usedMap bool
}

// newPercentParser spreads the right operand of % as CPython does: a
// tuple is the arguments, a dict is both the mapping and one argument,
// anything else is one argument.
func newPercentParser(format string, arg any) *percentParser {
	p := &percentParser{format: format}
	switch a := arg.(type) {
	case tuple:
		p.args = a
	case *ordered.Map:
		p.mapping = a
		p.args = []any{a}
	case *pyList:
		// A list passes CPython's mapping check: with no conversion
		// specifiers it is not "unconverted".
		p.args = []any{a}
	default:
		p.args = []any{arg}
	}
	return p
}

// take returns the next positional argument.
func (p *percentParser) take() (any, error) {
	if p.next >= len(p.args) {
		return nil, typeErr("not enough arguments for format string")
	}
	v := p.args[p.next]
	p.next++
	return v, nil
}

// more reports whether format has a byte left at i.
func (p *percentParser) more() bool { return p.i < len(p.format) }

// directive reads one conversion after its '%' and returns its text:
// [(key)][flags][width][.precision][length]type, in that order.
func (p *percentParser) directive(r *runner) (string, error) {
	if !p.more() {
		return "", runtimeErr("incomplete format")
	}
	val, haveVal, err := p.mappingKey()
	if err != nil {
		return "", err
	}
	spec, err := p.spec()
	if err != nil {
		return "", err
	}
	if !p.more() {
		return "", runtimeErr("incomplete format")
	}
	conv := p.format[p.i]
	p.i++
	if conv == '%' {
		return "%", nil
	}
	if !haveVal {
		if val, err = p.take(); err != nil {
			return "", err
		}
	}
	return percentConv(r, conv, val, spec)
}

// mappingKey reads a "(key)" and looks it up in the mapping.
func (p *percentParser) mappingKey() (any, bool, error) {
	if p.format[p.i] != '(' {
		return nil, false, nil
	}
	end := strings.IndexByte(p.format[p.i:], ')')
	if end < 0 {
		return nil, false, runtimeErr("incomplete format key")
	}
	key := p.format[p.i+1 : p.i+end]
	p.i += end + 1
	if p.mapping == nil {
		return nil, false, typeErr("format requires a mapping")
	}
	v, ok := lookupKey(p.mapping, key)
	if !ok {
		return nil, false, runtimeErr("%s", py.QuoteString(key))
	}
	p.usedMap = true
	return v, true, nil
}

// spec reads the flags, width, precision and length modifier.
func (p *percentParser) spec() (fmtSpec, error) {
	spec := p.flags()
	w, hasW, err := p.number()
	if err != nil {
		return spec, err
	}
	if hasW {
		if w < 0 {
			spec.align, w = '<', -w
		}
		spec.width = w
	}
	if p.more() && p.format[p.i] == '.' {
		p.i++
		prec, _, err := p.number()
		if err != nil {
			return spec, err
		}
		spec.prec, spec.hasPrec = prec, true
	}
	for p.more() && strings.IndexByte("lhL", p.format[p.i]) >= 0 {
		p.i++
	}
	return spec, nil
}

// flags reads the conversion flags "-+ #0".
func (p *percentParser) flags() fmtSpec {
	spec := fmtSpec{}
	for ; p.more() && strings.IndexByte("-+ #0", p.format[p.i]) >= 0; p.i++ {
		switch p.format[p.i] {
		case '-':
			spec.align = '<'
		case '+':
			spec.sign = '+'
		case ' ':
			if spec.sign == 0 {
				spec.sign = ' '
			}
		case '#':
			spec.alt = true
		case '0':
			spec.zero = true
		}
	}
	return spec
}

// number reads a width or precision: digits, or '*' taking an int
// argument. The bool is false when neither is there.
func (p *percentParser) number() (int, bool, error) {
	if p.more() && p.format[p.i] == '*' {
		p.i++
		v, err := p.take()
		if err != nil {
			return 0, false, err
		}
		n, ok := asInt(v)
		if !ok {
			return 0, false, typeErr("* wants int")
		}
		return n, true, nil
	}
	s := p.i
	for p.more() && p.format[p.i] >= '0' && p.format[p.i] <= '9' {
		p.i++
	}
	if s == p.i {
		return 0, false, nil
	}
	n, _ := strconv.Atoi(p.format[s:p.i])
	return n, true, nil
}

// percentConv formats one value by its conversion type, Python's rules
// for each (Objects/unicodeobject.c, PyUnicode_Format).
func percentConv(r *runner, conv byte, val any, spec fmtSpec) (string, error) {
	if spec.align == 0 {
		spec.align = '>'
	}
	switch conv {
	case 's', 'r', 'a':
		return percentStr(r, conv, val, spec)
	case 'c':
		return percentChar(val, spec)
	case 'd', 'i', 'u', 'x', 'X', 'o':
		return percentInt(conv, val, spec)
	case 'f', 'F', 'e', 'E', 'g', 'G':
		f, ok := numeric(val)
		if !ok {
			return "", typeErr("must be real number, not %s", typeName(val))
		}
		if !spec.hasPrec {
			spec.prec, spec.hasPrec = 6, true
		}
		spec.typ = conv
		return formatFloat(f, spec), nil
	}
	return "", runtimeErr("unsupported format character '%c' (0x%x)", conv, conv)
}

// percentStr converts with %s (str), %r and %a (repr).
func percentStr(r *runner, conv byte, val any, spec fmtSpec) (string, error) {
	var s string
	if conv == 's' {
		var err error
		if s, err = r.toStr(val); err != nil {
			return "", err
		}
	} else {
		s = pyRepr(val)
	}
	if spec.hasPrec {
		s = truncRunes(s, spec.prec)
	}
	return pad(s, spec.width, ' ', spec.align), nil
}

// percentChar converts with %c: a code point or a one-character string.
func percentChar(val any, spec fmtSpec) (string, error) {
	if n, ok := asInt(val); ok {
		if n < 0 || n > 0x10ffff {
			return "", runtimeErr("%%c arg not in range(0x110000)")
		}
		return pad(string(rune(n)), spec.width, ' ', spec.align), nil
	}
	if s, ok := val.(string); ok && utf8.RuneCountInString(s) == 1 {
		return pad(s, spec.width, ' ', spec.align), nil
	}
	return "", typeErr("%%c requires int or char")
}

// percentInt converts with %d, %i, %u (which truncate a float, as
// Python's do) and %x, %X, %o (which refuse one).
func percentInt(conv byte, val any, spec fmtSpec) (string, error) {
	decimal := conv == 'd' || conv == 'i' || conv == 'u'
	f, ok := numeric(val)
	if !ok {
		if decimal {
			return "", typeErr("%%%c format: a real number is required, not %s", conv, typeName(val))
		}
		return "", typeErr("%%%c format: an integer is required, not %s", conv, typeName(val))
	}
	n, isInt := asInt(val)
	if !isInt {
		if !decimal {
			return "", typeErr("%%%c format: an integer is required, not float", conv)
		}
		if math.Abs(f) >= 1<<62 && !math.IsInf(f, 0) {
			// Python ints are unbounded: print the float's exact
			// integer value.
			digits := new(big.Float).SetFloat64(math.Abs(math.Trunc(f))).Text('f', 0)
			return padNumber(signOf(f < 0, spec.sign), digits, spec), nil
		}
		n = int(math.Trunc(f))
	}
	spec.typ = conv
	if decimal {
		spec.typ = 'd'
	}
	return formatInt(n, spec), nil
}
