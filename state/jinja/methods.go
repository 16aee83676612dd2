package jinja

import (
	"strings"
	"unicode"

	"github.com/brinesalt/brine/state/ordered"
)

// Python methods available on template values. Salt's sandbox
// (SandboxedEnvironment, not the immutable one) allows the mutating ones
// (dict.update, list.append), which Salt formulas rely on.
var methodNames = map[string]map[string]bool{
	"dict":  set("items", "keys", "values", "get", "update", "setdefault", "pop", "popitem", "copy", "clear", "iteritems", "iterkeys", "itervalues", "has_key"),
	"list":  set("append", "extend", "insert", "pop", "remove", "index", "count", "sort", "reverse", "copy", "clear"),
	"tuple": set("index", "count"),
	"str": set("upper", "lower", "strip", "lstrip", "rstrip", "split", "rsplit", "splitlines", "startswith", "endswith",
		"replace", "format", "join", "find", "rfind", "index", "rindex", "count", "capitalize", "title", "swapcase",
		"isdigit", "isalpha", "isalnum", "isspace", "islower", "isupper", "isnumeric", "isdecimal", "istitle", "isidentifier",
		"zfill", "center", "ljust", "rjust", "partition", "rpartition", "casefold", "encode", "decode", "expandtabs",
		"removeprefix", "removesuffix", "format_map"),
	"loop":   set("cycle", "changed"),
	"cycler": set("next", "reset"),
	"int":    set("bit_length"),
	"float":  set("is_integer"),
}

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

func methodKind(v any) string {
	switch v.(type) {
	case *ordered.Map:
		return "dict"
	case *pyList:
		return "list"
	case tuple:
		return "tuple"
	case string:
		return "str"
	case *loopObj:
		return "loop"
	case *cyclerObj:
		return "cycler"
	case int:
		return "int"
	case float64:
		return "float"
	}
	return ""
}

func hasMethod(v any, name string) bool {
	return methodNames[methodKind(v)][name]
}

func argN(name string, args []any, min, max int) error {
	if len(args) < min {
		return typeErr("%s() takes at least %d argument (%d given)", name, min, len(args))
	}
	if len(args) > max {
		return typeErr("%s() takes at most %d arguments (%d given)", name, max, len(args))
	}
	return nil
}

func (r *runner) callMethod(recv any, name string, args []any, kw *ordered.Map) (any, error) {
	for _, a := range args {
		if u, ok := a.(*undefined); ok && r.strictFor(u) && name != "get" && name != "append" && name != "setdefault" {
			return nil, u.err()
		}
	}
	switch o := recv.(type) {
	case *ordered.Map:
		return r.dictMethod(o, name, args, kw)
	case *pyList:
		return r.listMethod(o, name, args)
	case tuple:
		return r.listMethod(&pyList{items: o}, name, args)
	case string:
		return r.strMethod(o, name, args, kw)
	case *loopObj:
		return r.loopMethod(o, name, args)
	case *cyclerObj:
		if name == "reset" {
			o.pos = 0
			return nil, nil
		}
		v := o.items[o.pos]
		o.pos = (o.pos + 1) % len(o.items)
		return v, nil
	case int:
		n := 0
		for x := max(o, -o); x > 0; x >>= 1 {
			n++
		}
		return n, nil
	case float64:
		return o == float64(int(o)), nil
	}
	return nil, typeErr("'%s' object has no attribute '%s'", typeName(recv), name)
}

func (r *runner) dictMethod(m *ordered.Map, name string, args []any, kw *ordered.Map) (any, error) {
	switch name {
	case "items", "iteritems":
		out := make([]any, 0, m.Len())
		m.Range(func(k, v any) bool { out = append(out, tuple{k, v}); return true })
		return &dictView{kind: "items", items: out}, nil
	case "keys", "iterkeys":
		return &dictView{kind: "keys", items: m.Keys()}, nil
	case "values", "itervalues":
		out := make([]any, 0, m.Len())
		m.Range(func(_, v any) bool { out = append(out, v); return true })
		return &dictView{kind: "values", items: out}, nil
	case "get":
		if err := argN("get", args, 1, 2); err != nil {
			return nil, err
		}
		if !hashable(args[0]) {
			return nil, typeErr("unhashable type: '%s'", typeName(args[0]))
		}
		if v, ok := lookupKey(m, args[0]); ok {
			return v, nil
		}
		if len(args) == 2 {
			return args[1], nil
		}
		return nil, nil
	case "has_key":
		if err := argN("has_key", args, 1, 1); err != nil {
			return nil, err
		}
		_, ok := lookupKey(m, args[0])
		return ok, nil
	case "update":
		if err := argN("update", args, 0, 1); err != nil {
			return nil, err
		}
		if len(args) == 1 {
			if err := r.dictUpdate(m, args[0]); err != nil {
				return nil, err
			}
		}
		kw.Range(func(k, v any) bool { m.Set(k, v); return true })
		return nil, nil
	case "setdefault":
		if err := argN("setdefault", args, 1, 2); err != nil {
			return nil, err
		}
		if !hashable(args[0]) {
			return nil, typeErr("unhashable type: '%s'", typeName(args[0]))
		}
		if v, ok := lookupKey(m, args[0]); ok {
			return v, nil
		}
		var d any
		if len(args) == 2 {
			d = args[1]
		}
		setKey(m, args[0], d)
		return d, nil
	case "pop":
		if err := argN("pop", args, 1, 2); err != nil {
			return nil, err
		}
		if v, ok := lookupKey(m, args[0]); ok {
			m.Delete(mapKeyIn(m, args[0]))
			return v, nil
		}
		if len(args) == 2 {
			return args[1], nil
		}
		return nil, runtimeErr("%s", pyRepr(args[0]))
	case "popitem":
		keys := m.Keys()
		if len(keys) == 0 {
			return nil, runtimeErr("'popitem(): dictionary is empty'")
		}
		k := keys[len(keys)-1]
		v := m.Value(k)
		m.Delete(k)
		return tuple{k, v}, nil
	case "copy":
		return m.Copy(), nil
	case "clear":
		for _, k := range m.Keys() {
			m.Delete(k)
		}
		return nil, nil
	}
	return nil, typeErr("'dict' object has no attribute '%s'", name)
}

// mapKeyIn returns the stored spelling of key k in m.
func mapKeyIn(m *ordered.Map, k any) any {
	if m.Has(k) {
		return k
	}
	mk := mapKey(k)
	for _, key := range m.Keys() {
		if hashable(key) && mapKey(key) == mk {
			return key
		}
	}
	return k
}

// listMethod implements list methods; tuples reach it only for index and
// count.
func (r *runner) listMethod(l *pyList, name string, args []any) (any, error) {
	switch name {
	case "append":
		if err := argN("append", args, 1, 1); err != nil {
			return nil, err
		}
		l.items = append(l.items, args[0])
		return nil, nil
	case "extend":
		if err := argN("extend", args, 1, 1); err != nil {
			return nil, err
		}
		items, err := r.iterate(args[0])
		if err != nil {
			return nil, err
		}
		l.items = append(l.items, items...)
		return nil, nil
	case "insert":
		if err := argN("insert", args, 2, 2); err != nil {
			return nil, err
		}
		i, ok := asInt(args[0])
		if !ok {
			return nil, typeErr("'%s' object cannot be interpreted as an integer", typeName(args[0]))
		}
		n := len(l.items)
		if i < 0 {
			i = max(i+n, 0)
		}
		i = min(i, n)
		l.items = append(l.items[:i:i], append([]any{args[1]}, l.items[i:]...)...)
		return nil, nil
	case "pop":
		if err := argN("pop", args, 0, 1); err != nil {
			return nil, err
		}
		n := len(l.items)
		if n == 0 {
			return nil, runtimeErr("pop from empty list")
		}
		i := n - 1
		if len(args) == 1 {
			var ok bool
			if i, ok = asInt(args[0]); !ok {
				return nil, typeErr("'%s' object cannot be interpreted as an integer", typeName(args[0]))
			}
			if i < 0 {
				i += n
			}
			if i < 0 || i >= n {
				return nil, runtimeErr("pop index out of range")
			}
		}
		v := l.items[i]
		l.items = append(l.items[:i:i], l.items[i+1:]...)
		return v, nil
	case "remove":
		if err := argN("remove", args, 1, 1); err != nil {
			return nil, err
		}
		for i, x := range l.items {
			if equal(x, args[0]) {
				l.items = append(l.items[:i:i], l.items[i+1:]...)
				return nil, nil
			}
		}
		return nil, runtimeErr("list.remove(x): x not in list")
	case "index":
		if err := argN("index", args, 1, 3); err != nil {
			return nil, err
		}
		for i, x := range l.items {
			if equal(x, args[0]) {
				return i, nil
			}
		}
		return nil, runtimeErr("%s is not in list", pyRepr(args[0]))
	case "count":
		if err := argN("count", args, 1, 1); err != nil {
			return nil, err
		}
		n := 0
		for _, x := range l.items {
			if equal(x, args[0]) {
				n++
			}
		}
		return n, nil
	case "sort":
		items := append([]any{}, l.items...)
		if err := sortValues(items, nil, false); err != nil {
			return nil, err
		}
		l.items = items
		return nil, nil
	case "reverse":
		n := len(l.items)
		items := make([]any, n)
		for i, x := range l.items {
			items[n-1-i] = x
		}
		l.items = items
		return nil, nil
	case "copy":
		return newList(append([]any{}, l.items...)), nil
	case "clear":
		l.items = []any{}
		return nil, nil
	}
	return nil, typeErr("'list' object has no attribute '%s'", name)
}

func (r *runner) loopMethod(l *loopObj, name string, args []any) (any, error) {
	switch name {
	case "cycle":
		if len(args) == 0 {
			return nil, typeErr("no items for cycling given")
		}
		return args[l.index0%len(args)], nil
	case "changed":
		v := tuple(args)
		if l.hasLast && equal(l.last, v) {
			return false, nil
		}
		l.last, l.hasLast = v, true
		return true, nil
	}
	return nil, typeErr("'LoopContext' object has no attribute '%s'", name)
}

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
	switch name {
	case "upper":
		return pyUpper(s), nil
	case "lower", "casefold":
		return strings.ToLower(s), nil
	case "strip", "lstrip", "rstrip":
		chars, ok, err := optChars(name, args)
		if err != nil {
			return nil, err
		}
		return pyStrip(s, name, chars, ok), nil
	case "split", "rsplit":
		return r.strSplit(s, name, args, kw)
	case "splitlines":
		out := []any{}
		for _, l := range pySplitLines(s, len(args) > 0 && args[0] == true) {
			out = append(out, l)
		}
		return newList(out), nil
	case "startswith", "endswith":
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
	case "replace":
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
	case "format":
		return r.strFormat(s, args, kw)
	case "format_map":
		if err := argN("format_map", args, 1, 1); err != nil {
			return nil, err
		}
		m, ok := args[0].(*ordered.Map)
		if !ok {
			return nil, typeErr("format_map() argument must be a mapping")
		}
		return r.strFormat(s, nil, m)
	case "join":
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
	case "find", "rfind", "index", "rindex", "count":
		if err := argN(name, args, 1, 3); err != nil {
			return nil, err
		}
		sub, err := strArg(name, args[0])
		if err != nil {
			return nil, typeErr("must be str, not %s", typeName(args[0]))
		}
		return strFind(s, sub, name)
	case "capitalize":
		return capitalize(s), nil
	case "title":
		return pyTitle(s), nil
	case "swapcase":
		var b strings.Builder
		for _, c := range s {
			if unicode.IsUpper(c) {
				b.WriteRune(unicode.ToLower(c))
			} else {
				b.WriteRune(unicode.ToUpper(c))
			}
		}
		return b.String(), nil
	case "isdigit", "isnumeric", "isdecimal":
		return s != "" && strings.IndexFunc(s, func(c rune) bool { return !unicode.IsDigit(c) }) < 0, nil
	case "isalpha":
		return s != "" && strings.IndexFunc(s, func(c rune) bool { return !unicode.IsLetter(c) }) < 0, nil
	case "isalnum":
		return s != "" && strings.IndexFunc(s, func(c rune) bool { return !unicode.IsLetter(c) && !unicode.IsDigit(c) }) < 0, nil
	case "isspace":
		return s != "" && strings.IndexFunc(s, func(c rune) bool { return !unicode.IsSpace(c) }) < 0, nil
	case "islower":
		return strings.IndexFunc(s, unicode.IsLetter) >= 0 && strings.ToLower(s) == s, nil
	case "isupper":
		return strings.IndexFunc(s, unicode.IsLetter) >= 0 && strings.ToUpper(s) == s, nil
	case "istitle":
		return s != "" && pyTitle(s) == s && strings.IndexFunc(s, unicode.IsLetter) >= 0, nil
	case "isidentifier":
		return s != "" && !unicode.IsDigit([]rune(s)[0]) && strings.IndexFunc(s, func(c rune) bool { return c != '_' && !unicode.IsLetter(c) && !unicode.IsDigit(c) }) < 0, nil
	case "zfill":
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
	case "center", "ljust", "rjust":
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
		return pad(s, w, fill, map[string]byte{"center": '^', "ljust": '<', "rjust": '>'}[name]), nil
	case "partition", "rpartition":
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
	case "removeprefix", "removesuffix":
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
	case "encode", "decode":
		return s, nil
	case "expandtabs":
		return strings.ReplaceAll(s, "\t", "        "), nil
	}
	return nil, typeErr("'str' object has no attribute '%s'", name)
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
