package file

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
)

// Python re flag bits (re.RegexFlag).
const (
	reIgnoreCase = 2
	reLocale     = 4
	reMultiline  = 8
	reDotAll     = 16
	reUnicode    = 32
	reVerbose    = 64
	reASCII      = 256
)

var flagNames = map[string]int{
	"I": reIgnoreCase, "IGNORECASE": reIgnoreCase, "L": reLocale, "LOCALE": reLocale,
	"M": reMultiline, "MULTILINE": reMultiline, "S": reDotAll, "DOTALL": reDotAll,
	"U": reUnicode, "UNICODE": reUnicode, "X": reVerbose, "VERBOSE": reVerbose,
	"A": reASCII, "ASCII": reASCII, "T": 1, "TEMPLATE": 1, "DEBUG": 128,
	"NOFLAG": 0,
}

// ParseFlags is file._get_flags: an int, one flag name or a list of
// names ("IGNORECASE", "m", …) as Python re flag bits.
func ParseFlags(v any) (int, error) {
	switch x := v.(type) {
	case nil:
		return 0, nil
	case int:
		return x, nil
	case bool:
		if x {
			return 1, nil
		}
		return 0, nil
	case string:
		v = []any{x}
	}
	list, ok := v.([]any)
	if !ok {
		return 0, modules.Errorf("Invalid re flags: \"%s\", must be given either as a single flag "+
			"string, a list of strings, as an integer, or as an re flag", ordered.KeyString(v))
	}
	flags := 0
	for _, f := range list {
		bit, ok := flagNames[strings.ToUpper(ordered.KeyString(f))]
		if !ok || bit == 0 {
			return 0, modules.Errorf("Invalid re flag given: %s", ordered.KeyString(f))
		}
		flags |= bit
	}
	return flags, nil
}

// CompilePy compiles a Python `re` pattern with Python flag bits for
// searching (not anchored). Python-only syntax is translated where RE2
// has an equivalent (\Z); look-around and backreferences are rejected.
// Known difference: without MULTILINE, Python's `$` also matches before
// a final newline, RE2's only at the very end.
func CompilePy(pattern string, flags int) (*regexp.Regexp, error) {
	if flags&reVerbose != 0 {
		return nil, fmt.Errorf("compile %q: verbose patterns are not supported", pattern)
	}
	tr, err := translatePy(pattern)
	if err != nil {
		return nil, err
	}
	prefix := ""
	if flags&reIgnoreCase != 0 {
		prefix += "i"
	}
	if flags&reMultiline != 0 {
		prefix += "m"
	}
	if flags&reDotAll != 0 {
		prefix += "s"
	}
	if prefix != "" {
		tr = "(?" + prefix + ")" + tr
	}
	re, err := regexp.Compile(tr)
	if err != nil {
		return nil, fmt.Errorf("compile %q: %w", pattern, err)
	}
	return re, nil
}

func translatePy(p string) (string, error) {
	var b strings.Builder
	inClass := false
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\' && i+1 < len(p):
			n := p[i+1]
			i++
			switch {
			case n == 'Z' && !inClass:
				b.WriteString(`\z`)
			case n >= '1' && n <= '9' && !inClass:
				return "", fmt.Errorf("compile %q: backreferences are not supported", p)
			default:
				b.WriteByte('\\')
				b.WriteByte(n)
			}
			continue
		case inClass:
			if c == ']' {
				inClass = false
			}
		case c == '[':
			inClass = true
			b.WriteByte(c)
			// a leading ] or ^] is literal inside the class
			if i+1 < len(p) && p[i+1] == '^' {
				b.WriteByte('^')
				i++
			}
			if i+1 < len(p) && p[i+1] == ']' {
				b.WriteString(`\]`)
				i++
			}
			continue
		case c == '(' && strings.HasPrefix(p[i:], "(?"):
			rest := p[i+2:]
			for _, bad := range []string{"=", "!", "<=", "<!", "P=", "(", ">"} {
				if strings.HasPrefix(rest, bad) {
					return "", fmt.Errorf("compile %q: look-around, backreferences and conditionals are not supported", p)
				}
			}
		}
		b.WriteByte(c)
	}
	return b.String(), nil
}

// replPart is a literal or a group reference of a parsed replacement.
type replPart struct {
	lit   string
	group int
	name  string
}

// ParseRepl parses a Python re.sub replacement template: \1..\99,
// \g<n>, \g<name> and the escapes \n \t \r \f \v \a \b \\; any other
// backslash pair is kept as it is (an unknown ASCII letter escape is an
// error, as in Python).
func ParseRepl(re *regexp.Regexp, repl string) ([]replPart, error) {
	var parts []replPart
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			parts = append(parts, replPart{lit: lit.String(), group: -1})
			lit.Reset()
		}
	}
	for i := 0; i < len(repl); i++ {
		c := repl[i]
		if c != '\\' || i+1 == len(repl) {
			lit.WriteByte(c)
			continue
		}
		n := repl[i+1]
		i++
		switch {
		case n >= '0' && n <= '9':
			j := i + 1
			if j < len(repl) && repl[j] >= '0' && repl[j] <= '9' {
				j++
			}
			g, _ := strconv.Atoi(repl[i:j])
			if n == '0' {
				return nil, fmt.Errorf("bad escape \\0 in replacement")
			}
			if g > re.NumSubexp() {
				return nil, fmt.Errorf("invalid group reference %d at position %d", g, i)
			}
			flush()
			parts = append(parts, replPart{group: g})
			i = j - 1
		case n == 'g':
			end := strings.IndexByte(repl[i:], '>')
			if i+1 >= len(repl) || repl[i+1] != '<' || end < 0 {
				return nil, fmt.Errorf("missing < in replacement group at position %d", i+1)
			}
			ref := repl[i+2 : i+end]
			flush()
			if g, err := strconv.Atoi(ref); err == nil {
				if g > re.NumSubexp() {
					return nil, fmt.Errorf("invalid group reference %d", g)
				}
				parts = append(parts, replPart{group: g})
			} else {
				if re.SubexpIndex(ref) < 0 {
					return nil, fmt.Errorf("unknown group name '%s'", ref)
				}
				parts = append(parts, replPart{group: re.SubexpIndex(ref), name: ref})
			}
			i += end
		default:
			if e, ok := replEscapes[n]; ok {
				lit.WriteByte(e)
			} else if (n >= 'a' && n <= 'z') || (n >= 'A' && n <= 'Z') {
				return nil, fmt.Errorf("bad escape \\%c in replacement", n)
			} else {
				lit.WriteByte('\\')
				lit.WriteByte(n)
			}
		}
	}
	flush()
	return parts, nil
}

var replEscapes = map[byte]byte{'n': '\n', 't': '\t', 'r': '\r', 'f': '\f', 'v': '\v', 'a': '\a', 'b': '\b', '\\': '\\'}

// Subn is Python's re.subn(pattern, repl, data, count): count 0 replaces
// every match.
func Subn(re *regexp.Regexp, parts []replPart, data []byte, count int) ([]byte, int) {
	n := -1
	if count > 0 {
		n = count
	}
	matches := re.FindAllSubmatchIndex(data, n)
	if len(matches) == 0 {
		return data, 0
	}
	var out []byte
	last := 0
	for _, m := range matches {
		out = append(out, data[last:m[0]]...)
		for _, p := range parts {
			if p.group < 0 {
				out = append(out, p.lit...)
				continue
			}
			if s, e := m[2*p.group], m[2*p.group+1]; s >= 0 {
				out = append(out, data[s:e]...)
			}
		}
		last = m[1]
	}
	return append(out, data[last:]...), len(matches)
}
