package jinja

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
)

func truncRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

// fmtSpec is a parsed Python format specification.
type fmtSpec struct {
	fill    rune
	align   byte
	sign    byte
	alt     bool
	zero    bool
	width   int
	comma   bool
	sep     byte // ',' or '_' when comma is set
	prec    int
	hasPrec bool
	typ     byte
}

func pad(s string, width int, fill rune, align byte) string {
	n := utf8.RuneCountInString(s)
	if n >= width {
		return s
	}
	if fill == 0 {
		fill = ' '
	}
	gap := width - n
	f := string(fill)
	switch align {
	case '<':
		return s + strings.Repeat(f, gap)
	case '^':
		return strings.Repeat(f, gap/2) + s + strings.Repeat(f, gap-gap/2)
	}
	return strings.Repeat(f, gap) + s
}

// padNumber applies sign-aware padding ('=' alignment or the 0 flag).
func padNumber(sign, body string, spec fmtSpec) string {
	if spec.zero && spec.align != '<' && spec.align != '^' && (spec.fill == 0 || spec.fill == '0') || spec.align == '=' {
		fill := spec.fill
		if spec.zero && (fill == 0 || spec.align != '=') {
			fill = '0'
		} else if fill == 0 {
			fill = ' '
		}
		w := spec.width - utf8.RuneCountInString(sign)
		return sign + pad(body, w, fill, '>')
	}
	align := spec.align
	if align == 0 {
		align = '>'
	}
	return pad(sign+body, spec.width, spec.fill, align)
}

func formatInt(n int, spec fmtSpec) string {
	neg := n < 0
	u := uint64(n)
	if neg {
		u = uint64(-n)
	}
	var body string
	switch spec.typ {
	case 'x':
		body = strconv.FormatUint(u, 16)
		if spec.alt {
			body = "0x" + body
		}
	case 'X':
		body = strings.ToUpper(strconv.FormatUint(u, 16))
		if spec.alt {
			body = "0X" + body
		}
	case 'o':
		body = strconv.FormatUint(u, 8)
		if spec.alt {
			body = "0o" + body
		}
	case 'b':
		body = strconv.FormatUint(u, 2)
		if spec.alt {
			body = "0b" + body
		}
	default:
		body = strconv.FormatUint(u, 10)
		if spec.comma {
			body = groupDigits(body, spec.sep)
		}
	}
	return padNumber(signOf(neg, spec.sign), body, spec)
}

func signOf(neg bool, sign byte) string {
	switch {
	case neg:
		return "-"
	case sign == '+':
		return "+"
	case sign == ' ':
		return " "
	}
	return ""
}

// groupDigits inserts sep every three digits from the right.
func groupDigits(digits string, sep byte) string {
	if len(digits) <= 3 {
		return digits
	}
	var b strings.Builder
	pre := len(digits) % 3
	if pre > 0 {
		b.WriteString(digits[:pre])
	}
	for i := pre; i < len(digits); i += 3 {
		if b.Len() > 0 {
			b.WriteByte(sep)
		}
		b.WriteString(digits[i : i+3])
	}
	return b.String()
}

func formatFloat(f float64, spec fmtSpec) string {
	neg := f < 0 || (f == 0 && math.Signbit(f))
	a := math.Abs(f)
	var body string
	switch {
	case math.IsInf(a, 0):
		body = "inf"
	case math.IsNaN(a):
		body, neg = "nan", false
	default:
		switch spec.typ {
		case 'f', 'F', '%':
			if spec.typ == '%' {
				a *= 100
			}
			body = strconv.FormatFloat(a, 'f', spec.prec, 64)
			if spec.comma {
				ip, fp, _ := strings.Cut(body, ".")
				body = groupDigits(ip, spec.sep)
				if fp != "" {
					body += "." + fp
				}
			}
			if spec.typ == '%' {
				body += "%"
			}
		case 'e', 'E':
			body = pyExp(strconv.FormatFloat(a, 'e', spec.prec, 64))
		case 'g', 'G':
			p := spec.prec
			if p == 0 {
				p = 1
			}
			body = pyGeneral(a, p, spec.alt)
		default:
			body = py.FormatFloat(a)
			if spec.comma && !strings.Contains(body, "e") {
				ip, fp, _ := strings.Cut(body, ".")
				body = groupDigits(ip, spec.sep) + "." + fp
			}
			if spec.hasPrec {
				body = pyGeneral(a, spec.prec, false)
				if !strings.ContainsAny(body, ".e") && !strings.Contains(body, "inf") {
					body += ".0"
				}
			}
		}
	}
	if spec.typ == 'E' || spec.typ == 'G' || spec.typ == 'F' {
		body = strings.ToUpper(body)
	}
	return padNumber(signOf(neg, spec.sign), body, spec)
}

// pyExp rewrites Go's exponent (e+00) into Python's (e+00 with at least
// two digits, which Go already gives).
func pyExp(s string) string { return s }

// pyGeneral is Python's 'g' presentation with precision p.
func pyGeneral(a float64, p int, alt bool) string {
	if a == 0 {
		return "0"
	}
	exp := int(math.Floor(math.Log10(a)))
	// Round first: rounding may bump the exponent.
	e := strconv.FormatFloat(a, 'e', p-1, 64)
	if i := strings.IndexByte(e, 'e'); i >= 0 {
		exp, _ = strconv.Atoi(e[i+1:])
	}
	var s string
	if exp < -4 || exp >= p {
		s = e
		if !alt {
			mant, ex, _ := strings.Cut(s, "e")
			if strings.Contains(mant, ".") {
				mant = strings.TrimRight(strings.TrimRight(mant, "0"), ".")
			}
			s = mant + "e" + ex
		}
		return s
	}
	s = strconv.FormatFloat(a, 'f', max(p-1-exp, 0), 64)
	if !alt && strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// parseFormatSpec parses the mini-language of str.format and format().
func parseFormatSpec(s string) (fmtSpec, error) {
	var spec fmtSpec
	rs := []rune(s)
	i := 0
	isAlign := func(r rune) bool { return r == '<' || r == '>' || r == '^' || r == '=' }
	if len(rs) >= 2 && isAlign(rs[1]) {
		spec.fill, spec.align = rs[0], byte(rs[1])
		i = 2
	} else if len(rs) >= 1 && isAlign(rs[0]) {
		spec.align = byte(rs[0])
		i = 1
	}
	if i < len(rs) && (rs[i] == '+' || rs[i] == '-' || rs[i] == ' ') {
		if rs[i] != '-' {
			spec.sign = byte(rs[i])
		}
		i++
	}
	if i < len(rs) && rs[i] == '#' {
		spec.alt = true
		i++
	}
	if i < len(rs) && rs[i] == '0' {
		spec.zero = true
		i++
	}
	st := i
	for i < len(rs) && rs[i] >= '0' && rs[i] <= '9' {
		i++
	}
	if st < i {
		spec.width, _ = strconv.Atoi(string(rs[st:i]))
	}
	if i < len(rs) && (rs[i] == ',' || rs[i] == '_') {
		spec.comma, spec.sep = true, byte(rs[i])
		i++
	}
	if i < len(rs) && rs[i] == '.' {
		i++
		st = i
		for i < len(rs) && rs[i] >= '0' && rs[i] <= '9' {
			i++
		}
		if st == i {
			return spec, runtimeErr("Format specifier missing precision")
		}
		spec.prec, _ = strconv.Atoi(string(rs[st:i]))
		spec.hasPrec = true
	}
	if i < len(rs) {
		spec.typ = byte(rs[i])
		i++
	}
	if i != len(rs) {
		return spec, runtimeErr("Invalid format specifier")
	}
	return spec, nil
}

// formatValue is Python's format(value, spec).
func (r *runner) formatValue(v any, specStr string) (string, error) {
	spec, err := parseFormatSpec(specStr)
	if err != nil {
		return "", err
	}
	switch x := v.(type) {
	case bool:
		if spec.typ == 0 || spec.typ == 's' {
			if specStr == "" {
				return pyStr(x), nil
			}
		}
		n, _ := asInt(x)
		v = n
	case *undefined:
		if r.strictFor(x) {
			return "", x.err()
		}
	}
	switch v.(type) {
	case int, float64, string:
	default:
		// object.__format__ accepts only the empty spec.
		if specStr != "" {
			return "", typeErr("unsupported format string passed to %s.__format__", typeName(v))
		}
	}
	switch x := v.(type) {
	case int:
		if spec.hasPrec && spec.typ != 'f' && spec.typ != 'F' && spec.typ != 'e' && spec.typ != 'E' && spec.typ != 'g' && spec.typ != 'G' && spec.typ != '%' {
			return "", runtimeErr("Precision not allowed in integer format specifier")
		}
		switch spec.typ {
		case 0, 'd', 'x', 'X', 'o', 'b', 'n':
			if spec.typ == 'n' {
				spec.typ = 'd'
			}
			return formatInt(x, spec), nil
		case 'f', 'F', 'e', 'E', 'g', 'G', '%':
			if !spec.hasPrec {
				spec.prec, spec.hasPrec = 6, spec.typ != 'g' && spec.typ != 'G'
				if !spec.hasPrec {
					spec.prec = 6
				}
			}
			return formatFloat(float64(x), spec), nil
		case 'c':
			return pad(string(rune(x)), spec.width, spec.fill, orDefault(spec.align, '<')), nil
		}
		return "", runtimeErr("Unknown format code '%c' for object of type 'int'", spec.typ)
	case float64:
		switch spec.typ {
		case 0, 'f', 'F', 'e', 'E', 'g', 'G', '%', 'n':
			if spec.typ == 'n' {
				spec.typ = 'g'
			}
			if !spec.hasPrec && spec.typ != 0 {
				spec.prec = 6
			}
			return formatFloat(x, spec), nil
		}
		return "", runtimeErr("Unknown format code '%c' for object of type 'float'", spec.typ)
	}
	s, err := r.toStr(v)
	if err != nil {
		return "", err
	}
	if spec.typ != 0 && spec.typ != 's' {
		return "", runtimeErr("Unknown format code '%c' for object of type '%s'", spec.typ, typeName(v))
	}
	if spec.comma {
		return "", runtimeErr("Cannot specify ',' with 's'.")
	}
	if spec.hasPrec {
		s = truncRunes(s, spec.prec)
	}
	return pad(s, spec.width, spec.fill, orDefault(spec.align, '<')), nil
}

func orDefault(b, d byte) byte {
	if b == 0 {
		return d
	}
	return b
}

// strFormat implements str.format(*args, **kwargs).
func (r *runner) strFormat(format string, args []any, kw *ordered.Map) (string, error) {
	var b strings.Builder
	auto := 0
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c == '}' {
			if i+1 < len(format) && format[i+1] == '}' {
				i++
				b.WriteByte('}')
				continue
			}
			return "", runtimeErr("Single '}' encountered in format string")
		}
		if c != '{' {
			b.WriteByte(c)
			continue
		}
		if i+1 < len(format) && format[i+1] == '{' {
			i++
			b.WriteByte('{')
			continue
		}
		end := strings.IndexByte(format[i:], '}')
		if end < 0 {
			return "", runtimeErr("Single '{' encountered in format string")
		}
		field := format[i+1 : i+end]
		i += end
		s, err := r.formatField(field, args, kw, &auto)
		if err != nil {
			return "", err
		}
		b.WriteString(s)
	}
	return b.String(), nil
}

func (r *runner) formatField(field string, args []any, kw *ordered.Map, auto *int) (string, error) {
	spec := ""
	if j := strings.IndexByte(field, ':'); j >= 0 {
		field, spec = field[:j], field[j+1:]
	}
	conv := byte(0)
	if j := strings.IndexByte(field, '!'); j >= 0 && j+1 < len(field) {
		conv = field[j+1]
		field = field[:j]
	}
	name := field
	rest := ""
	if j := strings.IndexAny(field, ".["); j >= 0 {
		name, rest = field[:j], field[j:]
	}
	var v any
	switch {
	case name == "":
		if *auto >= len(args) {
			return "", runtimeErr("Replacement index %d out of range for positional args tuple", *auto)
		}
		v = args[*auto]
		*auto++
	case name[0] >= '0' && name[0] <= '9':
		n, _ := strconv.Atoi(name)
		if n >= len(args) {
			return "", runtimeErr("Replacement index %d out of range for positional args tuple", n)
		}
		v = args[n]
	default:
		val, ok := kw.Get(name)
		if !ok {
			return "", runtimeErr("%s", py.QuoteString(name))
		}
		v = val
	}
	for rest != "" {
		var key string
		if rest[0] == '.' {
			rest = rest[1:]
			j := strings.IndexAny(rest, ".[")
			if j < 0 {
				j = len(rest)
			}
			key, rest = rest[:j], rest[j:]
			nv, err := r.getattr(v, key)
			if err != nil {
				return "", err
			}
			v = nv
			continue
		}
		j := strings.IndexByte(rest, ']')
		if j < 0 {
			return "", runtimeErr("Missing ']' in format string")
		}
		key, rest = rest[1:j], rest[j+1:]
		var k any = key
		if n, err := strconv.Atoi(key); err == nil {
			k = n
		}
		nv, err := r.getitem(v, k)
		if err != nil {
			return "", err
		}
		v = nv
	}
	if u, ok := v.(*undefined); ok {
		return "", u.err()
	}
	switch conv {
	case 'r', 'a':
		v = pyRepr(v)
	case 's':
		v = pyStr(v)
	}
	return r.formatValue(v, spec)
}
