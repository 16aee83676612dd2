package saltyaml

import (
	"encoding/base64"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/brinesalt/brine/internal/py"
)

// Long tag names as PyYAML reports them.
const (
	tagPrefix    = "tag:yaml.org,2002:"
	tagNull      = tagPrefix + "null"
	tagBool      = tagPrefix + "bool"
	tagInt       = tagPrefix + "int"
	tagFloat     = tagPrefix + "float"
	tagStr       = tagPrefix + "str"
	tagTimestamp = tagPrefix + "timestamp"
	tagMerge     = tagPrefix + "merge"
	tagValue     = tagPrefix + "value"
	tagBinary    = tagPrefix + "binary"
	tagUnicode   = tagPrefix + "python/unicode"
	tagMap       = tagPrefix + "map"
	tagOmap      = tagPrefix + "omap"
	tagSeq       = tagPrefix + "seq"
	tagSet       = tagPrefix + "set"
	tagPairs     = tagPrefix + "pairs"
)

// implicitResolvers are PyYAML's YAML 1.1 resolvers (yaml/resolver.py) in
// the order PyYAML tries them. Salt adds none. Go's $ does not match
// before a final newline as Python's does; plain scalars never end in one.
var implicitResolvers = []struct {
	tag string
	re  *regexp.Regexp
}{
	{tagBool, regexp.MustCompile(`^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$`)},
	{tagFloat, regexp.MustCompile(`^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?` +
		`|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?` +
		`|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*` +
		`|[-+]?\.(?:inf|Inf|INF)` +
		`|\.(?:nan|NaN|NAN))$`)},
	{tagInt, regexp.MustCompile(`^(?:[-+]?0b[0-1_]+` +
		`|[-+]?0[0-7_]+` +
		`|[-+]?(?:0|[1-9][0-9_]*)` +
		`|[-+]?0x[0-9a-fA-F_]+` +
		`|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$`)},
	{tagMerge, regexp.MustCompile(`^(?:<<)$`)},
	{tagNull, regexp.MustCompile(`^(?:~|null|Null|NULL|)$`)},
	{tagTimestamp, regexp.MustCompile(`^(?:[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]` +
		`|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?` +
		`(?:[Tt]|[ \t]+)[0-9][0-9]?` +
		`:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?` +
		`(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)$`)},
	{tagValue, regexp.MustCompile(`^(?:=)$`)},
}

// resolveImplicit returns the tag PyYAML gives a plain scalar. Like
// PyYAML it only tries the resolvers registered for the first character.
func resolveImplicit(value string) string {
	if value == "" {
		return tagNull
	}
	switch c := value[0]; {
	case !strings.ContainsRune(resolverFirst, rune(c)):
		return tagStr
	case strings.IndexByte("yYnNtTfFoO~<=", c) >= 0:
		// The resolvers for these first characters match fixed
		// spellings only: look them up instead of running the
		// regular expressions on every key such as "file.managed".
		if t, ok := fixedScalars[value]; ok {
			return t
		}
		return tagStr
	}
	for _, r := range implicitResolvers {
		if r.re.MatchString(value) {
			return r.tag
		}
	}
	return tagStr
}

// fixedScalars are the whole plain scalars the bool, null, merge and
// value resolvers match (their regular expressions above, without the
// empty null), for values starting with one of their first characters.
var fixedScalars = map[string]string{
	"yes": tagBool, "Yes": tagBool, "YES": tagBool, "no": tagBool, "No": tagBool, "NO": tagBool,
	"true": tagBool, "True": tagBool, "TRUE": tagBool, "false": tagBool, "False": tagBool, "FALSE": tagBool,
	"on": tagBool, "On": tagBool, "ON": tagBool, "off": tagBool, "Off": tagBool, "OFF": tagBool,
	"~": tagNull, "null": tagNull, "Null": tagNull, "NULL": tagNull,
	"<<": tagMerge, "=": tagValue,
}

// resolverFirst holds every first character some implicit resolver takes.
const resolverFirst = "yYnNtTfFoO-+0123456789.<~="

var boolValues = map[string]bool{
	"yes": true, "no": false, "true": true, "false": false, "on": true, "off": false,
}

// constructScalar builds the value of a scalar with the given (long) tag.
// It returns a message in Python's wording on failure, and ok=false when
// no constructor exists for the tag.
func constructScalar(tag, value string) (v any, msg string, ok bool) {
	switch tag {
	case tagNull:
		return nil, "", true
	case tagBool:
		b, found := boolValues[strings.ToLower(value)]
		if !found {
			return nil, py.QuoteString(strings.ToLower(value)), true
		}
		return b, "", true
	case tagInt:
		v, msg := constructInt(value)
		return v, msg, true
	case tagFloat:
		v, msg := constructFloat(value)
		return v, msg, true
	case tagStr, tagTimestamp, tagUnicode:
		// Salt registers construct_scalar for timestamps: dates stay strings.
		return value, "", true
	case tagBinary:
		b, err := base64.StdEncoding.DecodeString(strings.Map(dropSpace, value))
		if err != nil {
			return nil, "failed to decode base64 data: " + err.Error(), true
		}
		return string(b), "", true
	}
	return nil, "", false
}

func dropSpace(r rune) rune {
	if r == ' ' || r == '\n' || r == '\t' || r == '\r' {
		return -1
	}
	return r
}

// saltStripZeros is SaltYamlSafeLoader.construct_scalar: an int written
// with leading zeros (and no 0b/0x prefix) loses them, so it is read as
// decimal rather than octal. A sign in front defeats the check, as in Salt.
func saltStripZeros(value string) string {
	if value == "0" || !strings.HasPrefix(value, "0") ||
		strings.HasPrefix(value, "0b") || strings.HasPrefix(value, "0x") {
		return value
	}
	value = strings.TrimLeft(value, "0")
	if value == "" {
		return "0"
	}
	return value
}

// constructInt is PyYAML's construct_yaml_int after Salt's zero stripping.
func constructInt(raw string) (any, string) {
	value := strings.ReplaceAll(saltStripZeros(raw), "_", "")
	sign := 1
	if value == "" {
		return nil, "string index out of range"
	}
	if value[0] == '-' {
		sign = -1
	}
	if value[0] == '+' || value[0] == '-' {
		value = value[1:]
	}
	switch {
	case value == "0":
		return 0, ""
	case strings.HasPrefix(value, "0b"):
		return parseInt(value[2:], 2, sign)
	case strings.HasPrefix(value, "0x"):
		return parseInt(value[2:], 16, sign)
	case strings.HasPrefix(value, "0"):
		return parseInt(value, 8, sign)
	case strings.Contains(value, ":"):
		n := 0
		for _, part := range strings.Split(value, ":") {
			d, msg := parseInt(part, 10, 1)
			if msg != "" {
				return nil, msg
			}
			n = n*60 + d.(int)
		}
		return sign * n, ""
	}
	return parseInt(value, 10, sign)
}

// parseInt mimics Python's int(s, base). Values beyond int64 become
// float64, the nearest the value model has to Python's big integers.
func parseInt(s string, base, sign int) (any, string) {
	t := strings.TrimSpace(s)
	signed := t
	if sign < 0 && t != "" && t[0] != '-' && t[0] != '+' {
		signed = "-" + t
	}
	n, err := strconv.ParseInt(signed, base, 64)
	if err == nil {
		return int(n), ""
	}
	if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
		if f, ferr := strconv.ParseFloat(signed, 64); ferr == nil && base == 10 {
			return f, ""
		}
	}
	return nil, fmt.Sprintf("invalid literal for int() with base %d: %s", base, py.QuoteString(s))
}

// constructFloat is PyYAML's construct_yaml_float.
func constructFloat(raw string) (any, string) {
	value := strings.ToLower(strings.ReplaceAll(raw, "_", ""))
	sign := 1.0
	if value != "" && value[0] == '-' {
		sign = -1
	}
	if value != "" && (value[0] == '+' || value[0] == '-') {
		value = value[1:]
	}
	switch {
	case value == ".inf":
		return sign * math.Inf(1), ""
	case value == ".nan":
		return math.NaN(), ""
	case strings.Contains(value, ":"):
		f := 0.0
		for _, part := range strings.Split(value, ":") {
			d, err := strconv.ParseFloat(strings.TrimSpace(part), 64)
			if err != nil {
				return nil, fmt.Sprintf("could not convert string to float: %s", py.QuoteString(part))
			}
			f = f*60 + d
		}
		return sign * f, ""
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
	if err != nil && !isRangeErr(err) {
		return nil, fmt.Sprintf("could not convert string to float: %s", py.QuoteString(value))
	}
	return sign * f, ""
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}
