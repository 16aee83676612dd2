package saltyaml

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v4"

	"github.com/brinesalt/brine/internal/ordered"
)

// ParseCLIArg is Salt's yamlify_arg (salt/utils/args.py), applied to every
// command-line argument and key=value value: the string is YAML-loaded,
// but kept as given whenever loading would lose or reinterpret it.
//
// It stays a string when it is blank, "---" or "..."; only digits and
// underscores ("1_000"); contains a tab, CR or newline; fails to load;
// loads to a mapping but does not start with "{", or to a list but does
// not start with "["; is "|" or "!"; or loads to a type Salt does not pass
// on (!!binary, !!set). A string with "#" is replaced only when it loads to
// something other than a string or null, so "a#b" and "#x" survive.
// "None" is nil.
func ParseCLIArg(s string) any {
	switch strings.TrimSpace(s) {
	case "", "---", "...":
		return s
	}
	if strings.Contains(s, "_") && strings.Trim(strings.TrimSpace(s), "0123456789_") == "" {
		return s
	}
	if strings.ContainsAny(s, "\t\r\n") {
		return s
	}
	if s == "None" {
		return nil
	}
	root, err := ParseNode([]byte(s), "<unicode string>")
	if err != nil {
		return s
	}
	if root != nil && root.Kind == yaml.ScalarNode {
		if t := tagOf(root); t == tagBinary || t == tagSet {
			return s
		}
	}
	v, err := Decode(root)
	if err != nil {
		return s
	}
	if strings.Contains(s, "#") {
		if _, isStr := v.(string); isStr || v == nil {
			return s
		}
		return v
	}
	switch x := v.(type) {
	case *ordered.Map:
		if !strings.HasPrefix(s, "{") {
			return s
		}
	case []any:
		if !strings.HasPrefix(s, "[") {
			return s
		}
	case string:
		if x == "" && (s == "|" || s == "!") {
			return s
		}
	case nil:
		if s == "!" {
			return s
		}
	}
	return v
}

// ParseInput is Salt's parse_input without condition_input: each argument
// of the form name=value, where name is an identifier (a letter or "_",
// then letters, digits, "_", "." or "-") and "=" is not followed by
// another "=", becomes a keyword argument; the rest are positional. Values
// go through ParseCLIArg except for keywords named in noParse (Salt's
// --no-parse). A repeated keyword keeps its first position and last value.
// kw is never nil.
func ParseInput(args []string, noParse ...string) (pos []any, kw *ordered.Map) {
	kw = ordered.New()
	pos = []any{}
	for _, a := range args {
		name, value, ok := ParseKwarg(a)
		switch {
		case !ok:
			pos = append(pos, ParseCLIArg(a))
		case contains(noParse, name):
			kw.Set(name, value)
		default:
			kw.Set(name, ParseCLIArg(value))
		}
	}
	return pos, kw
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// ParseKwarg is Salt's parse_kwarg: it splits "name=value" when s matches
// ^([^\d\W][\w.-]*)=(?!=)(.*)$ with Python's Unicode \w, where "." stops
// at a newline and "$" may sit before one final newline.
func ParseKwarg(s string) (name, value string, ok bool) {
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == '=' {
			break
		}
		if !isWord(r) && (i == 0 || (r != '.' && r != '-')) {
			return "", "", false
		}
		if i == 0 && unicode.Is(unicode.Nd, r) {
			return "", "", false
		}
		i += n
	}
	if i == 0 || i >= len(s) || strings.HasPrefix(s[i+1:], "=") {
		return "", "", false
	}
	value = s[i+1:]
	value = strings.TrimSuffix(value, "\n")
	if strings.Contains(value, "\n") {
		return "", "", false
	}
	return s[:i], value, true
}

// isWord is Python's Unicode \w: letters, numbers and underscore.
func isWord(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r)
}

// ConditionedInput is Salt's parse_input with condition_input, what the
// salt command line publishes (salt/utils/parsers.py
// SaltCMDOptionParser, salt/utils/args.py): the positional arguments
// parsed as ParseInput parses them, then, when there are keyword
// arguments, one dict {"__kwarg__": True, name: value, ...}. An integer
// too long for the wire goes as its digits, as salt.payload's
// ext_type_encoder sends "very long longs" as strings; condition_input
// keeps a positional job id a string the same way.
func ConditionedInput(args []string, noParse ...string) []any {
	out := []any{}
	kw := ordered.New()
	for _, a := range args {
		name, value, ok := ParseKwarg(a)
		switch {
		case !ok:
			out = append(out, longInt(ParseCLIArg(a), a))
		case contains(noParse, name):
			kw.Set(name, value)
		default:
			kw.Set(name, longInt(ParseCLIArg(value), value))
		}
	}
	if kw.Len() == 0 {
		return out
	}
	d := ordered.FromPairs("__kwarg__", true)
	kw.Range(func(k, v any) bool {
		d.Set(k, v)
		return true
	})
	return append(out, d)
}

// SplitKwargs is the half of salt.minion.load_args_and_kwargs that takes
// the trailing {"__kwarg__": True} mapping ConditionedInput appends off
// the positional arguments as the keyword arguments. kw is never nil.
func SplitKwargs(args []any) (pos []any, kw *ordered.Map) {
	kw = ordered.New()
	if n := len(args); n > 0 {
		if d, ok := args[n-1].(*ordered.Map); ok && d.Value("__kwarg__") == true {
			d.Range(func(k, v any) bool {
				if k != "__kwarg__" {
					kw.Set(k, v)
				}
				return true
			})
			return args[:n-1], kw
		}
	}
	return args, kw
}

// longInt returns the decimal literal raw instead of v when YAML read an
// integer too long for int64 as a float.
func longInt(v any, raw string) any {
	if _, isFloat := v.(float64); !isFloat {
		return v
	}
	s := strings.TrimSpace(raw)
	digits := strings.TrimLeft(s, "+-")
	if digits == "" || strings.Trim(digits, "0123456789") != "" {
		return v
	}
	return s
}
