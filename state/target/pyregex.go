package target

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// compilePyRegex compiles a Python `re` pattern for use as re.match does:
// anchored at the start of the subject only. Python syntax that RE2
// cannot express (lookaround, backreferences, conditionals, atomic groups,
// possessive quantifiers, verbose mode) is rejected with a message naming
// the construct; the few spellings that differ are translated.
//
// Python's `$` also matches before a newline that ends the subject; Brine
// emulates that by letting `$` consume the newline (outside MULTILINE).
// \d \w \s are expanded to their Unicode meaning unless (?a) is given.
// Known remaining differences: \b and \B and the negated classes inside
// brackets are ASCII-based, and a pattern that matches the final newline
// after `$` fails.
func compilePyRegex(pat string) (*regexp.Regexp, error) {
	tr, err := translatePyRegex(pat)
	if err != nil {
		var u unsupportedSyntax
		if errors.As(err, &u) {
			return nil, &PatternError{Pattern: pat, Msg: "unsupported regular expression", Err: u}
		}
		return nil, &PatternError{Pattern: pat, Msg: err.Error()}
	}
	re, err := regexp.Compile(`\A(?:` + tr + `)`)
	if err != nil {
		return nil, &PatternError{Pattern: pat, Msg: "invalid regular expression", Err: err}
	}
	return re, nil
}

// Escapes CPython accepts outside and inside a character class; any other
// ASCII letter after a backslash is re.error("bad escape").
const (
	pyEscapesOut = "AbBdDsSwWZafnrtvxuUN0123456789"
	pyEscapesIn  = "bdDsSwWafnrtvxuUN0123456789"
)

func translatePyRegex(p string) (string, error) {
	var b strings.Builder
	inClass := false
	classStart := 0 // index in p where the current class body begins
	multiline := hasInlineFlag(p, 'm')
	unicodeClasses := !hasInlineFlag(p, 'a')
	flagsOnly := true // nothing but global flag groups so far
	for i := 0; i < len(p); i++ {
		c := p[i]
		atStart := flagsOnly
		flagsOnly = false
		switch {
		case c == '\\':
			if i+1 >= len(p) {
				return "", fmt.Errorf("bad escape (end of pattern)")
			}
			if unicodeClasses && writeUnicodeClass(&b, p[i+1], inClass) {
				i++
				continue
			}
			n, err := translateEscape(&b, p, i, inClass)
			if err != nil {
				return "", err
			}
			i += n - 1
		case inClass:
			switch {
			case c == ']' && i > classStart:
				inClass = false
				b.WriteByte(c)
			case c == '[':
				b.WriteString(`\[`) // Go would read [:alpha:] as a POSIX class
			default:
				b.WriteByte(c)
			}
		case c == '[':
			inClass = true
			b.WriteByte(c)
			classStart = i + 1
			if classStart < len(p) && p[classStart] == '^' {
				b.WriteByte('^')
				i++
				classStart++
			}
		case c == '(' && strings.HasPrefix(p[i:], "(?"):
			n, err := translateGroup(&b, p, i, atStart)
			if err != nil {
				return "", err
			}
			flagsOnly = atStart && strings.HasSuffix(p[i:i+n], ")")
			i += n - 1
		case c == '{':
			n := translateBrace(&b, p, i)
			i += n - 1
		case c == '$' && !multiline:
			// Python's $ also matches before a newline ending the string.
			b.WriteString(`(?:\n?\z)`)
		case c == '+' || c == '*' || c == '?':
			if i+1 < len(p) && p[i+1] == '+' {
				return "", unsupportedSyntax(fmt.Sprintf("possessive quantifier %q", p[i:i+2]))
			}
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	if inClass {
		return "", fmt.Errorf("unterminated character set")
	}
	return b.String(), nil
}

// hasInlineFlag reports whether an inline flag group turns on flag
// anywhere: MULTILINE leaves `$` to Go's (?m) semantics, ASCII keeps Go's
// ASCII classes.
func hasInlineFlag(p string, flag byte) bool {
	for rest := p; ; {
		i := strings.Index(rest, "(?")
		if i < 0 {
			return false
		}
		rest = rest[i+2:]
		for j := 0; j < len(rest) && strings.IndexByte("aiLmsux", rest[j]) >= 0; j++ {
			if rest[j] == flag {
				return true
			}
		}
	}
}

// Python's Unicode \d, \w and \s for str patterns (str.isdecimal,
// str.isalnum plus "_", str.isspace).
const (
	pyDigit = `\p{Nd}`
	pyWord  = `\p{L}\p{N}_`
	pySpace = `\t\n\v\f\r\x1c-\x1f\x85\p{Z}`
)

// writeUnicodeClass writes the Unicode form of \d \D \w \W \s \S. Inside
// a bracket only the positive classes can be expanded; the negated ones
// keep Go's ASCII meaning.
func writeUnicodeClass(b *strings.Builder, e byte, inClass bool) bool {
	var set string
	switch e {
	case 'd', 'D':
		set = pyDigit
	case 'w', 'W':
		set = pyWord
	case 's', 'S':
		set = pySpace
	default:
		return false
	}
	neg := e == 'D' || e == 'W' || e == 'S'
	switch {
	case inClass && neg:
		return false
	case inClass:
		b.WriteString(set)
	case neg:
		b.WriteString("[^" + set + "]")
	default:
		b.WriteString("[" + set + "]")
	}
	return true
}

// translateEscape writes the Go form of the escape at p[i] and returns how
// many bytes of p it consumed.
func translateEscape(b *strings.Builder, p string, i int, inClass bool) (int, error) {
	e := p[i+1]
	allowed := pyEscapesOut
	if inClass {
		allowed = pyEscapesIn
	}
	if isASCIILetter(e) || isDigit(e) {
		if !strings.ContainsRune(allowed, rune(e)) {
			return 0, fmt.Errorf(`bad escape \%c`, e)
		}
	}
	if e >= 0x80 {
		// An escaped non-ASCII character is itself; Go rejects the escape.
		r, size := utf8.DecodeRuneInString(p[i+1:])
		b.WriteString(regexp.QuoteMeta(string(r)))
		return 1 + size, nil
	}
	switch {
	case e == 'x':
		if len(p) < i+4 || !isHex(p[i+2:i+4]) {
			return 0, fmt.Errorf(`incomplete escape \x`)
		}
		b.WriteString(p[i : i+4])
		return 4, nil
	case e == 'Z':
		b.WriteString(`\z`)
		return 2, nil
	case e == 'b' && inClass:
		b.WriteString(`\x08`)
		return 2, nil
	case e == 'N':
		return 0, unsupportedSyntax(`named character escape \N{...}`)
	case e == 'u' || e == 'U':
		width := 4
		if e == 'U' {
			width = 8
		}
		hex := p[i+2:]
		if len(hex) < width || !isHex(hex[:width]) {
			return 0, fmt.Errorf(`incomplete escape \%c`, e)
		}
		fmt.Fprintf(b, `\x{%s}`, hex[:width])
		return 2 + width, nil
	case isDigit(e):
		return translateDigitEscape(b, p, i, inClass)
	}
	b.WriteString(p[i : i+2])
	return 2, nil
}

// translateDigitEscape handles \0, octal escapes and backreferences.
func translateDigitEscape(b *strings.Builder, p string, i int, inClass bool) (int, error) {
	j := i + 1
	for j < len(p) && j < i+4 && isOctal(p[j]) {
		j++
	}
	octal := p[i+1 : j]
	if inClass && octal == "" {
		return 0, fmt.Errorf(`bad escape \%c`, p[i+1])
	}
	if p[i+1] == '0' || inClass || len(octal) == 3 {
		v := 0
		for _, d := range octal {
			v = v*8 + int(d-'0')
		}
		if v > 0o377 {
			return 0, fmt.Errorf(`octal escape value \%s outside of range 0-0o377`, octal)
		}
		fmt.Fprintf(b, `\x{%x}`, v)
		return 1 + len(octal), nil
	}
	return 0, unsupportedSyntax(fmt.Sprintf(`backreference \%c`, p[i+1]))
}

// translateGroup handles a "(?" construct at p[i].
func translateGroup(b *strings.Builder, p string, i int, atStart bool) (int, error) {
	rest := p[i+2:]
	unsupported := []struct{ prefix, what string }{
		{"=", "lookahead (?=...)"},
		{"!", "negative lookahead (?!...)"},
		{"<=", "lookbehind (?<=...)"},
		{"<!", "negative lookbehind (?<!...)"},
		{"P=", "named backreference (?P=...)"},
		{"(", "conditional group (?(...)...)"},
		{">", "atomic group (?>...)"},
	}
	for _, u := range unsupported {
		if strings.HasPrefix(rest, u.prefix) {
			return 0, unsupportedSyntax(u.what)
		}
	}
	switch {
	case strings.HasPrefix(rest, "#"):
		end := strings.IndexByte(rest, ')')
		if end < 0 {
			return 0, fmt.Errorf("missing ), unterminated comment")
		}
		return 2 + end + 1, nil
	case strings.HasPrefix(rest, ":"), strings.HasPrefix(rest, "P<"):
		b.WriteString("(?")
		return 2, nil
	}
	return translateFlags(b, p, i, atStart)
}

// translateFlags handles inline flags "(?ims)" at the start of the
// pattern and scoped "(?ims-ims:...)" groups, with CPython's checks.
func translateFlags(b *strings.Builder, p string, i int, atStart bool) (int, error) {
	on, off := "", ""
	neg := false
	for j := i + 2; j < len(p); j++ {
		c := p[j]
		switch {
		case c == '-' && !neg:
			neg = true
		case strings.IndexByte("ims", c) >= 0:
			if neg {
				if strings.IndexByte(on, c) >= 0 {
					return 0, fmt.Errorf("bad inline flags: flag turned on and off")
				}
				off += string(c)
			} else {
				on += string(c)
			}
		case c == 'a' || c == 'u':
			// Go is already ASCII for \w etc.; 'u' is the default for str.
		case c == 'x':
			return 0, unsupportedSyntax("verbose flag (?x)")
		case c == 'L':
			return 0, fmt.Errorf("bad inline flag: cannot use 'L' flag with a str pattern")
		case c == ')' && !neg && j > i+2:
			if !atStart {
				return 0, fmt.Errorf("global flags not at the start of the expression")
			}
			if on != "" {
				b.WriteString("(?" + on + ")")
			}
			return j - i + 1, nil
		case c == ':' && (!neg || off != ""):
			f := on
			if off != "" {
				f += "-" + off
			}
			if f == "" {
				b.WriteString("(?:")
			} else {
				b.WriteString("(?" + f + ":")
			}
			return j - i + 1, nil
		default:
			return 0, fmt.Errorf("unknown extension or bad inline flag %q", p[i:j+1])
		}
	}
	return 0, fmt.Errorf("missing -, : or ) after inline flags")
}

// translateBrace copies a "{" at p[i]; Python reads "{,n}" as "{0,n}"
// where Go would take it literally.
func translateBrace(b *strings.Builder, p string, i int) int {
	j := i + 1
	if j < len(p) && p[j] == ',' {
		k := j + 1
		for k < len(p) && isDigit(p[k]) {
			k++
		}
		if k > j+1 && k < len(p) && p[k] == '}' {
			b.WriteString("{0" + p[j:k+1])
			return k - i + 1
		}
	}
	b.WriteByte('{')
	return 1
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isDigit(c byte) bool       { return c >= '0' && c <= '9' }
func isOctal(c byte) bool       { return c >= '0' && c <= '7' }

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isDigit(c) && !(c >= 'a' && c <= 'f') && !(c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}
