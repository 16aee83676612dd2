package jinja

import (
	"strings"
	"unicode"

	"github.com/brinesalt/brine/internal/ordered"
)

func strArg(name string, v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", typeErr("%s arg must be None or str", name)
	}
	return s, nil
}

// optChars reads the optional chars argument of strip() and friends.
func optChars(name string, args []any) (string, bool, error) {
	if len(args) == 0 || args[0] == nil {
		return "", false, nil
	}
	s, err := strArg(name, args[0])
	return s, true, err
}

func (r *runner) strMethod(s, name string, args []any, kw *ordered.Map) (any, error) {
	if f, ok := strMethods[name]; ok {
		return f(r, s, name, args, kw)
	}
	return nil, typeErr("'str' object has no attribute '%s'", name)
}

// strMethodFunc is one str method; name is the name it was called by,
// for the methods that serve several (strip, lstrip and rstrip).
type strMethodFunc func(r *runner, s, name string, args []any, kw *ordered.Map) (any, error)

// strMethods holds Python's str methods by name; init fills it, because
// the methods reach back to it through the runner.
var strMethods map[string]strMethodFunc

func init() {
	strMethods = map[string]strMethodFunc{
		"upper":        strMethodUpper,
		"lower":        strMethodLower,
		"casefold":     strMethodLower,
		"strip":        strMethodStrip,
		"lstrip":       strMethodStrip,
		"rstrip":       strMethodStrip,
		"split":        strMethodSplit,
		"rsplit":       strMethodSplit,
		"splitlines":   strMethodSplitlines,
		"startswith":   strMethodStartswith,
		"endswith":     strMethodStartswith,
		"replace":      strMethodReplace,
		"format":       strMethodFormat,
		"format_map":   strMethodFormatMap,
		"join":         strMethodJoin,
		"find":         strMethodFind,
		"rfind":        strMethodFind,
		"index":        strMethodFind,
		"rindex":       strMethodFind,
		"count":        strMethodFind,
		"capitalize":   strMethodCapitalize,
		"title":        strMethodTitle,
		"swapcase":     strMethodSwapcase,
		"isdigit":      strMethodIsdigit,
		"isnumeric":    strMethodIsdigit,
		"isdecimal":    strMethodIsdigit,
		"isalpha":      strMethodIsalpha,
		"isalnum":      strMethodIsalnum,
		"isspace":      strMethodIsspace,
		"islower":      strMethodIslower,
		"isupper":      strMethodIsupper,
		"istitle":      strMethodIstitle,
		"isidentifier": strMethodIsidentifier,
		"zfill":        strMethodZfill,
		"center":       strMethodCenter,
		"ljust":        strMethodCenter,
		"rjust":        strMethodCenter,
		"partition":    strMethodPartition,
		"rpartition":   strMethodPartition,
		"removeprefix": strMethodRemoveprefix,
		"removesuffix": strMethodRemoveprefix,
		"encode":       strMethodEncode,
		"decode":       strMethodEncode,
		"expandtabs":   strMethodExpandtabs,
	}
}

func strMethodUpper(_ *runner, s, _ string, _ []any, _ *ordered.Map) (any, error) {
	return pyUpper(s), nil
}

func strMethodLower(_ *runner, s, _ string, _ []any, _ *ordered.Map) (any, error) {
	return strings.ToLower(s), nil
}

func strMethodStrip(_ *runner, s, name string, args []any, _ *ordered.Map) (any, error) {
	chars, ok, err := optChars(name, args)
	if err != nil {
		return nil, err
	}
	return pyStrip(s, name, chars, ok), nil
}

func strMethodSplit(r *runner, s, name string, args []any, kw *ordered.Map) (any, error) {
	return r.strSplit(s, name, args, kw)
}

func strMethodSplitlines(_ *runner, s, _ string, args []any, _ *ordered.Map) (any, error) {
	out := []any{}
	for _, l := range pySplitLines(s, len(args) > 0 && args[0] == true) {
		out = append(out, l)
	}
	return newList(out), nil
}

func strMethodStartswith(_ *runner, s, name string, args []any, _ *ordered.Map) (any, error) {
	if err := argN(name, args, 1, 3); err != nil {
		return nil, err
	}
	prefixes := []any{args[0]}
	if t, ok := args[0].(tuple); ok {
		prefixes = t
	}
	for _, p := range prefixes {
		ps, ok := p.(string)
		if !ok {
			return nil, typeErr("%s first arg must be str or a tuple of str, not %s", name, typeName(p))
		}
		if name == "startswith" && strings.HasPrefix(s, ps) || name == "endswith" && strings.HasSuffix(s, ps) {
			return true, nil
		}
	}
	return false, nil
}

func strMethodReplace(_ *runner, s, _ string, args []any, _ *ordered.Map) (any, error) {
	if err := argN("replace", args, 2, 3); err != nil {
		return nil, err
	}
	old, err := strArg("replace", args[0])
	if err != nil {
		return nil, typeErr("replace() argument 1 must be str, not %s", typeName(args[0]))
	}
	nw, err := strArg("replace", args[1])
	if err != nil {
		return nil, typeErr("replace() argument 2 must be str, not %s", typeName(args[1]))
	}
	n := -1
	if len(args) == 3 {
		n, _ = asInt(args[2])
	}
	return strings.Replace(s, old, nw, n), nil
}

func strMethodFormat(r *runner, s, _ string, args []any, kw *ordered.Map) (any, error) {
	return r.strFormat(s, args, kw)
}

func strMethodFormatMap(r *runner, s, _ string, args []any, _ *ordered.Map) (any, error) {
	if err := argN("format_map", args, 1, 1); err != nil {
		return nil, err
	}
	m, ok := args[0].(*ordered.Map)
	if !ok {
		return nil, typeErr("format_map() argument must be a mapping")
	}
	return r.strFormat(s, nil, m)
}

func strMethodJoin(r *runner, s, _ string, args []any, _ *ordered.Map) (any, error) {
	if err := argN("join", args, 1, 1); err != nil {
		return nil, err
	}
	items, err := r.iterate(args[0])
	if err != nil {
		return nil, err
	}
	parts := make([]string, len(items))
	for i, it := range items {
		p, ok := it.(string)
		if !ok {
			return nil, typeErr("sequence item %d: expected str instance, %s found", i, typeName(it))
		}
		parts[i] = p
	}
	return strings.Join(parts, s), nil
}

func strMethodFind(_ *runner, s, name string, args []any, _ *ordered.Map) (any, error) {
	if err := argN(name, args, 1, 3); err != nil {
		return nil, err
	}
	sub, err := strArg(name, args[0])
	if err != nil {
		return nil, typeErr("must be str, not %s", typeName(args[0]))
	}
	return strFind(s, sub, name)
}

func strMethodCapitalize(_ *runner, s, _ string, _ []any, _ *ordered.Map) (any, error) {
	return capitalize(s), nil
}

func strMethodTitle(_ *runner, s, _ string, _ []any, _ *ordered.Map) (any, error) {
	return pyTitle(s), nil
}

func strMethodSwapcase(_ *runner, s, _ string, _ []any, _ *ordered.Map) (any, error) {
	var b strings.Builder
	for _, c := range s {
		if unicode.IsUpper(c) {
			b.WriteRune(unicode.ToLower(c))
		} else {
			b.WriteRune(unicode.ToUpper(c))
		}
	}
	return b.String(), nil
}

func strMethodIsdigit(_ *runner, s, _ string, _ []any, _ *ordered.Map) (any, error) {
	return s != "" && strings.IndexFunc(s, func(c rune) bool { return !unicode.IsDigit(c) }) < 0, nil
}

func strMethodIsalpha(_ *runner, s, _ string, _ []any, _ *ordered.Map) (any, error) {
	return s != "" && strings.IndexFunc(s, func(c rune) bool { return !unicode.IsLetter(c) }) < 0, nil
}

func strMethodIsalnum(_ *runner, s, _ string, _ []any, _ *ordered.Map) (any, error) {
	return s != "" && strings.IndexFunc(s, func(c rune) bool { return !unicode.IsLetter(c) && !unicode.IsDigit(c) }) < 0, nil
}

func strMethodIsspace(_ *runner, s, _ string, _ []any, _ *ordered.Map) (any, error) {
	return s != "" && strings.IndexFunc(s, func(c rune) bool { return !unicode.IsSpace(c) }) < 0, nil
}

func strMethodIslower(_ *runner, s, _ string, _ []any, _ *ordered.Map) (any, error) {
	return hasCased(s) && strings.ToLower(s) == s, nil
}

func strMethodIsupper(_ *runner, s, _ string, _ []any, _ *ordered.Map) (any, error) {
	return hasCased(s) && pyUpper(s) == s, nil
}

func strMethodIstitle(_ *runner, s, _ string, _ []any, _ *ordered.Map) (any, error) {
	return s != "" && pyTitle(s) == s && strings.IndexFunc(s, unicode.IsLetter) >= 0, nil
}

func strMethodIsidentifier(_ *runner, s, _ string, _ []any, _ *ordered.Map) (any, error) {
	return s != "" && !unicode.IsDigit([]rune(s)[0]) && strings.IndexFunc(s, func(c rune) bool { return c != '_' && !unicode.IsLetter(c) && !unicode.IsDigit(c) }) < 0, nil
}

func strMethodZfill(_ *runner, s, _ string, args []any, _ *ordered.Map) (any, error) {
	if err := argN("zfill", args, 1, 1); err != nil {
		return nil, err
	}
	w, _ := asInt(args[0])
	sign := ""
	body := s
	if strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+") {
		sign, body = s[:1], s[1:]
	}
	return sign + pad(body, w-len(sign), '0', '>'), nil
}

func strMethodCenter(_ *runner, s, name string, args []any, _ *ordered.Map) (any, error) {
	if err := argN(name, args, 1, 2); err != nil {
		return nil, err
	}
	w, _ := asInt(args[0])
	fill := ' '
	if len(args) == 2 {
		f, _ := args[1].(string)
		if rs := []rune(f); len(rs) == 1 {
			fill = rs[0]
		} else {
			return nil, typeErr("The fill character must be exactly one character long")
		}
	}
	if name == "center" {
		return pyCenter(s, w, fill), nil
	}
	return pad(s, w, fill, map[string]byte{"ljust": '<', "rjust": '>'}[name]), nil
}

func strMethodPartition(_ *runner, s, name string, args []any, _ *ordered.Map) (any, error) {
	if err := argN(name, args, 1, 1); err != nil {
		return nil, err
	}
	sep, err := strArg(name, args[0])
	if err != nil {
		return nil, err
	}
	if sep == "" {
		return nil, runtimeErr("empty separator")
	}
	i := strings.Index(s, sep)
	if name == "rpartition" {
		i = strings.LastIndex(s, sep)
	}
	if i < 0 {
		if name == "rpartition" {
			return tuple{"", "", s}, nil
		}
		return tuple{s, "", ""}, nil
	}
	return tuple{s[:i], sep, s[i+len(sep):]}, nil
}

func strMethodRemoveprefix(_ *runner, s, name string, args []any, _ *ordered.Map) (any, error) {
	if err := argN(name, args, 1, 1); err != nil {
		return nil, err
	}
	a, err := strArg(name, args[0])
	if err != nil {
		return nil, err
	}
	if name == "removeprefix" {
		return strings.TrimPrefix(s, a), nil
	}
	return strings.TrimSuffix(s, a), nil
}

func strMethodEncode(_ *runner, s, _ string, _ []any, _ *ordered.Map) (any, error) {
	return s, nil
}

func strMethodExpandtabs(_ *runner, s, _ string, _ []any, _ *ordered.Map) (any, error) {
	return strings.ReplaceAll(s, "\t", "        "), nil
}

func strFind(s, sub, name string) (any, error) {
	var i int
	switch name {
	case "count":
		if sub == "" {
			return len([]rune(s)) + 1, nil
		}
		return strings.Count(s, sub), nil
	case "find", "index":
		i = strings.Index(s, sub)
	default:
		i = strings.LastIndex(s, sub)
	}
	if i >= 0 {
		i = len([]rune(s[:i]))
	} else if name == "index" || name == "rindex" {
		return nil, runtimeErr("substring not found")
	}
	return i, nil
}

func isPySpace(c rune) bool {
	return unicode.IsSpace(c) || c == 0x1c || c == 0x1d || c == 0x1e || c == 0x1f
}

func pyStrip(s, mode, chars string, haveChars bool) string {
	cut := isPySpace
	if haveChars {
		cut = func(c rune) bool { return strings.ContainsRune(chars, c) }
	}
	switch mode {
	case "lstrip":
		return strings.TrimLeftFunc(s, cut)
	case "rstrip":
		return strings.TrimRightFunc(s, cut)
	}
	return strings.TrimFunc(s, cut)
}

func (r *runner) strSplit(s, name string, args []any, kw *ordered.Map) (any, error) {
	var sep any
	n := -1
	if len(args) > 0 {
		sep = args[0]
	} else if v, ok := kw.Get("sep"); ok {
		sep = v
	}
	if len(args) > 1 {
		n, _ = asInt(args[1])
	} else if v, ok := kw.Get("maxsplit"); ok {
		n, _ = asInt(v)
	}
	var parts []string
	if sep == nil {
		parts = splitWhitespace(s, n, name == "rsplit")
	} else {
		sp, ok := sep.(string)
		if !ok {
			return nil, typeErr("must be str or None, not %s", typeName(sep))
		}
		if sp == "" {
			return nil, runtimeErr("empty separator")
		}
		switch {
		case n < 0:
			parts = strings.Split(s, sp)
		case name == "split":
			parts = strings.SplitN(s, sp, n+1)
		default:
			parts = rsplitN(s, sp, n)
		}
	}
	out := make([]any, len(parts))
	for i, p := range parts {
		out[i] = p
	}
	return newList(out), nil
}

func rsplitN(s, sep string, n int) []string {
	var rev []string
	for n > 0 {
		i := strings.LastIndex(s, sep)
		if i < 0 {
			break
		}
		rev = append(rev, s[i+len(sep):])
		s = s[:i]
		n--
	}
	out := []string{s}
	for i := len(rev) - 1; i >= 0; i-- {
		out = append(out, rev[i])
	}
	return out
}

// splitWhitespace is str.split() with no separator.
func splitWhitespace(s string, n int, fromRight bool) []string {
	if n < 0 {
		return strings.FieldsFunc(s, isPySpace)
	}
	if fromRight {
		var rev []string
		rest := strings.TrimRightFunc(s, isPySpace)
		for i := 0; i < n && rest != ""; i++ {
			j := strings.LastIndexFunc(rest, isPySpace)
			if j < 0 {
				break
			}
			rev = append(rev, rest[j+1:])
			rest = strings.TrimRightFunc(rest[:j], isPySpace)
		}
		var out []string
		if rest != "" {
			out = append(out, rest)
		}
		for i := len(rev) - 1; i >= 0; i-- {
			out = append(out, rev[i])
		}
		return out
	}
	var out []string
	rest := strings.TrimLeftFunc(s, isPySpace)
	for rest != "" {
		if len(out) == n {
			out = append(out, rest)
			break
		}
		j := strings.IndexFunc(rest, isPySpace)
		if j < 0 {
			out = append(out, rest)
			break
		}
		out = append(out, rest[:j])
		rest = strings.TrimLeftFunc(rest[j:], isPySpace)
	}
	return out
}

func pySplitLines(s string, keepends bool) []string {
	var out []string
	for s != "" {
		i := strings.IndexAny(s, "\n\r\v\f\x1c\x1d\x1e")
		if i < 0 {
			out = append(out, s)
			break
		}
		end := i + 1
		if s[i] == '\r' && end < len(s) && s[end] == '\n' {
			end++
		}
		if keepends {
			out = append(out, s[:end])
		} else {
			out = append(out, s[:i])
		}
		s = s[end:]
	}
	return out
}

func capitalize(s string) string {
	rs := []rune(strings.ToLower(s))
	if len(rs) > 0 {
		rs[0] = unicode.ToUpper(rs[0])
	}
	return string(rs)
}

// pyTitle is Python's str.title: a letter after a non-letter is upper
// cased, every other letter lower cased.
func pyTitle(s string) string {
	var b strings.Builder
	prevLetter := false
	for _, c := range s {
		if unicode.IsLetter(c) {
			if prevLetter {
				b.WriteRune(unicode.ToLower(c))
			} else {
				b.WriteRune(unicode.ToTitle(c))
			}
			prevLetter = true
		} else {
			b.WriteRune(c)
			prevLetter = false
		}
	}
	return b.String()
}

func lowerStr(s string) string { return strings.ToLower(s) }
func upperStr(s string) string { return pyUpper(s) }

// pyUpper is str.upper, including the one special case Salt trees meet:
// "ß" becomes "SS".
func pyUpper(s string) string {
	return strings.ReplaceAll(strings.ToUpper(s), "ß", "SS")
}

// pyCenter is str.center, which puts the odd space on the left when the
// width is odd (unlike format's '^').
func pyCenter(s string, width int, fill rune) string {
	n := len([]rune(s))
	if n >= width {
		return s
	}
	gap := width - n
	left := gap/2 + (gap & width & 1)
	f := string(fill)
	return strings.Repeat(f, left) + s + strings.Repeat(f, gap-left)
}

// jinjaTitle is Jinja's title filter: words start after whitespace, '-',
// '(', '{', '[' or '<'; each word is upper-cased at its first character
// and lower-cased after it ("it's" stays "It's", unlike str.title).
func jinjaTitle(s string) string {
	var b strings.Builder
	start := true
	for _, c := range s {
		if unicode.IsSpace(c) || strings.ContainsRune("-({[<", c) {
			b.WriteRune(c)
			start = true
			continue
		}
		if start {
			b.WriteString(pyUpper(string(c)))
			start = false
		} else {
			b.WriteRune(unicode.ToLower(c))
		}
	}
	return b.String()
}
