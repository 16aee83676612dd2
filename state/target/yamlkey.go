package target

import (
	"math"
	"regexp"
	"strconv"
	"strings"
)

// PyYAML's YAML 1.1 implicit resolvers for plain scalars
// (yaml/resolver.py), which is what Salt's yamlify_arg applies.
var (
	yamlBool  = regexp.MustCompile(`^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$`)
	yamlNull  = regexp.MustCompile(`^(?:~|null|Null|NULL)$`)
	yamlInt   = regexp.MustCompile(`^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$`)
	yamlFloat = regexp.MustCompile(`^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9_]+(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$`)
)

// yamlifyKey is Salt's yamlify_arg (salt/utils/args.py) restricted to
// results that can be dict keys: it returns the scalar a traversal key
// loads as, and false when loading leaves it unchanged (or would produce
// an unhashable value), so the caller gives up as Salt does.
func yamlifyKey(arg string) (any, bool) {
	trimmed := strings.TrimSpace(arg)
	switch {
	case trimmed == "" || trimmed == "---" || trimmed == "...":
		return nil, false
	case strings.Contains(arg, "_") && strings.Trim(trimmed, "0123456789_") == "":
		return nil, false
	case strings.ContainsAny(arg, "\t\r\n"):
		return nil, false
	case arg == "None":
		return nil, true
	}
	src := trimmed
	if strings.Contains(arg, "#") {
		if strings.HasPrefix(src, "#") {
			return nil, false
		}
		if i := strings.Index(src, " #"); i >= 0 {
			src = strings.TrimSpace(src[:i])
		}
		v, ok := resolveYAMLScalar(src)
		if _, isStr := v.(string); !ok || isStr || v == nil {
			return nil, false
		}
		return v, true
	}
	v, ok := resolveYAMLScalar(src)
	if !ok {
		return nil, false
	}
	if s, isStr := v.(string); isStr && s == arg {
		return nil, false
	}
	return v, true
}

// resolveYAMLScalar loads one plain or simply quoted scalar.
func resolveYAMLScalar(s string) (any, bool) {
	if len(s) >= 2 && s[0] == '\'' && s[len(s)-1] == '\'' {
		body := s[1 : len(s)-1]
		if strings.Contains(strings.ReplaceAll(body, "''", ""), "'") {
			return nil, false
		}
		return strings.ReplaceAll(body, "''", "'"), true
	}
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		u, err := strconv.Unquote(s)
		if err != nil {
			return nil, false
		}
		return u, true
	}
	if s != "" && strings.ContainsRune("[{&*!|>%@`", rune(s[0])) {
		return nil, false // collections, anchors, tags: not hashable or not scalar
	}
	if strings.Contains(s, ": ") || strings.HasPrefix(s, "- ") || s == "-" {
		return nil, false
	}
	switch {
	case s == "":
		return nil, true
	case yamlNull.MatchString(s):
		return nil, true
	case yamlBool.MatchString(s):
		switch s[0] {
		case 'y', 'Y', 't', 'T':
			return true, true
		case 'o', 'O':
			return s[1] == 'n' || s[1] == 'N', true
		}
		return false, true
	case yamlInt.MatchString(s):
		return yamlToInt(s)
	case yamlFloat.MatchString(s):
		return yamlToFloat(s)
	}
	return s, true
}

func yamlToInt(s string) (any, bool) {
	s = strings.ReplaceAll(s, "_", "")
	sign := 1
	if s[0] == '-' || s[0] == '+' {
		if s[0] == '-' {
			sign = -1
		}
		s = s[1:]
	}
	var n int64
	var err error
	switch {
	case s == "0":
		return 0, true
	case strings.HasPrefix(s, "0b"):
		n, err = strconv.ParseInt(s[2:], 2, 64)
	case strings.HasPrefix(s, "0x"):
		n, err = strconv.ParseInt(s[2:], 16, 64)
	case s[0] == '0':
		n, err = strconv.ParseInt(s[1:], 8, 64)
	case strings.Contains(s, ":"):
		for _, part := range strings.Split(s, ":") {
			d, e := strconv.ParseInt(part, 10, 64)
			if e != nil {
				return nil, false
			}
			n = n*60 + d
		}
	default:
		n, err = strconv.ParseInt(s, 10, 64)
	}
	if err != nil {
		return nil, false
	}
	return sign * int(n), true
}

func yamlToFloat(s string) (any, bool) {
	s = strings.ToLower(strings.ReplaceAll(s, "_", ""))
	sign := 1.0
	if s[0] == '-' || s[0] == '+' {
		if s[0] == '-' {
			sign = -1
		}
		s = s[1:]
	}
	switch {
	case s == ".inf":
		return sign * math.Inf(1), true
	case s == ".nan":
		return math.NaN(), true
	case strings.Contains(s, ":"):
		parts := strings.Split(s, ":")
		var v float64
		for _, part := range parts {
			d, err := strconv.ParseFloat(part, 64)
			if err != nil {
				return nil, false
			}
			v = v*60 + d
		}
		return sign * v, true
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, false
	}
	return sign * f, true
}
