package jinja

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"hash"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/internal/saltyaml"
)

// saltFilters are the filters Salt adds (salt/utils/jinja.py, data.py,
// hashutils.py, yamlencoding.py, dateutils.py, stringutils.py).
func saltFilters() map[string]filterFunc {
	return map[string]filterFunc{
		"json":                 fJSON,
		"tojson":               fToJSON,
		"yaml":                 fYAML,
		"yaml_encode":          fYAMLEncode,
		"yaml_dquote":          strFilter(saltyaml.DumpDQuote),
		"yaml_squote":          strFilter(yamlSingleQuote),
		"python":               func(r *runner, v any, _ []any, _ *ordered.Map) (any, error) { return pyRepr(v), nil },
		"json_encode_dict":     identity,
		"json_decode_dict":     identity,
		"json_encode_list":     identity,
		"json_decode_list":     identity,
		"load_yaml":            loadFilter("yaml"),
		"load_json":            loadFilter("json"),
		"load_text":            loadFilter("text"),
		"sequence":             fSequence,
		"skip":                 func(*runner, any, []any, *ordered.Map) (any, error) { return "", nil },
		"to_bool":              fToBool,
		"quote":                fQuote,
		"regex_search":         regexFilter(false),
		"regex_match":          regexFilter(true),
		"regex_replace":        fRegexReplace,
		"regex_escape":         strFilter(pyReEscape),
		"md5":                  hashFilter(md5.New),
		"sha1":                 hashFilter(sha1.New),
		"sha256":               hashFilter(sha256.New),
		"sha512":               hashFilter(sha512.New),
		"base64_encode":        fBase64Encode,
		"base64_decode":        fBase64Decode,
		"strftime":             fStrftime,
		"union":                setFilter("union"),
		"intersect":            setFilter("intersect"),
		"difference":           setFilter("difference"),
		"symmetric_difference": setFilter("symmetric_difference"),
		"avg":                  fAvg,
		"flatten":              fFlatten,
		"to_num":               fToNum,
		"str_to_num":           fToNum,
		"is_list":              func(r *runner, v any, _ []any, _ *ordered.Map) (any, error) { return tests["list"](r, v, nil) },
		"is_iter": func(r *runner, v any, _ []any, _ *ordered.Map) (any, error) {
			_, ok := seqItems(v)
			_, m := v.(*ordered.Map)
			return ok || m, nil
		},
		"exactly_one_true": fExactlyN(1),
		"exactly_n_true":   fExactlyNArg,
		"traverse":         fTraverse,
		"path_join":        fPathJoin,
		"contains_whitespace": func(r *runner, v any, _ []any, _ *ordered.Map) (any, error) {
			s, _ := v.(string)
			return strings.IndexFunc(s, unicode.IsSpace) >= 0, nil
		},
		"is_hex": func(r *runner, v any, _ []any, _ *ordered.Map) (any, error) {
			s, _ := v.(string)
			_, err := strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 64)
			return err == nil, nil
		},
		"is_empty":          func(r *runner, v any, _ []any, _ *ordered.Map) (any, error) { t, err := r.truthy(v); return !t, err },
		"method_call":       fMethodCall,
		"to_entries":        fToEntries,
		"from_entries":      fFromEntries,
		"sorted_ignorecase": fSortedIgnorecase,
		"substring_in_list": fSubstringInList,
		"to_snake_case":     strFilter(toSnakeCase),
		"to_camelcase":      fToCamelCase,
		"uuid":              fUUID,
	}
}

func identity(_ *runner, v any, _ []any, _ *ordered.Map) (any, error) { return v, nil }

func fJSON(r *runner, v any, args []any, kw *ordered.Map) (any, error) {
	sortKeys, _ := r.truthy(arg(args, kw, 0, "sort_keys", true))
	indent := arg(args, kw, 1, "indent", nil)
	return pyJSON(v, jsonOpts{sortKeys: sortKeys, indent: indent})
}

func fToJSON(r *runner, v any, args []any, kw *ordered.Map) (any, error) {
	indent := arg(args, kw, 0, "indent", nil)
	sortKeys, _ := r.truthy(kwOr(kw, "sort_keys", false))
	s, err := pyJSON(v, jsonOpts{sortKeys: sortKeys, indent: indent, ensureASCII: true})
	if err != nil {
		return nil, err
	}
	return strings.NewReplacer("<", `\u003c`, ">", `\u003e`, "&", `\u0026`, "'", `\u0027`).Replace(s), nil
}

func kwOr(kw *ordered.Map, name string, def any) any {
	if v, ok := kw.Get(name); ok {
		return v
	}
	return def
}

func loadFilter(format string) filterFunc {
	return func(r *runner, v any, _ []any, _ *ordered.Map) (any, error) {
		s, ok := v.(string)
		if !ok {
			if m, isMod := v.(*module); isMod {
				s = m.output
			} else if format == "text" {
				return v, nil
			} else if format == "json" {
				return nil, templateErr("Unable to load json from %s", pyStr(v))
			} else {
				return nil, templateErr("Unable to load yaml from %s", pyStr(v))
			}
		}
		return r.loadFormat(format, s)
	}
}

func fSequence(_ *runner, v any, _ []any, _ *ordered.Map) (any, error) {
	switch v.(type) {
	case *pyList, tuple, *ordered.Map:
		return v, nil
	}
	return newList([]any{v}), nil
}

// fToBool is salt.utils.jinja.to_bool.
func fToBool(_ *runner, v any, _ []any, _ *ordered.Map) (any, error) {
	switch x := v.(type) {
	case nil, *undefined:
		// An undefined is "hashable" to Python, so to_bool falls through
		// to False without touching it.
		return false, nil
	case bool:
		return x, nil
	case string:
		switch strings.ToLower(x) {
		case "yes", "1", "true":
			return true, nil
		}
		return false, nil
	case int:
		return x > 0, nil
	case *pyList:
		return len(x.items) > 0, nil
	case *ordered.Map:
		return x.Len() > 0, nil
	}
	return false, nil
}

// fQuote is shlex.quote.
func fQuote(r *runner, v any, _ []any, _ *ordered.Map) (any, error) {
	if t, err := r.truthy(v); err != nil || !t {
		// shlex.quote returns '' for any false value before looking at it.
		return "''", err
	}
	s, ok := v.(string)
	if !ok {
		return nil, typeErr("expected string or bytes-like object, got '%s'", typeName(v))
	}
	return py.Quote(s), nil
}

func regexFlags(r *runner, args []any, kw *ordered.Map, from int) (bool, bool) {
	ic, _ := r.truthy(arg(args, kw, from, "ignorecase", false))
	ml, _ := r.truthy(arg(args, kw, from+1, "multiline", false))
	return ic, ml
}

// regexFilter is regex_search / regex_match: the groups as a tuple, or
// the whole match when the pattern has none, or None.
func regexFilter(anchored bool) filterFunc {
	return func(r *runner, v any, args []any, kw *ordered.Map) (any, error) {
		s, ok := v.(string)
		if !ok {
			return nil, typeErr("expected string or bytes-like object")
		}
		pat, _ := arg(args, kw, 0, "rgx", "").(string)
		ic, ml := regexFlags(r, args, kw, 1)
		re, err := compilePyRegex(pat, ic, ml)
		if err != nil {
			return nil, err
		}
		m := re.FindStringSubmatchIndex(s)
		if m == nil || anchored && m[0] != 0 {
			return nil, nil
		}
		if len(m) == 2 {
			return tuple{s[m[0]:m[1]]}, nil
		}
		out := tuple{}
		for i := 2; i < len(m); i += 2 {
			if m[i] < 0 {
				out = append(out, nil)
			} else {
				out = append(out, s[m[i]:m[i+1]])
			}
		}
		return out, nil
	}
}

var pyGroupRef = regexp.MustCompile(`\\(\d+)|\\g<(\w+)>`)

func fRegexReplace(r *runner, v any, args []any, kw *ordered.Map) (any, error) {
	s, ok := v.(string)
	if !ok {
		return nil, typeErr("expected string or bytes-like object")
	}
	pat, _ := arg(args, kw, 0, "rgx", "").(string)
	repl, _ := arg(args, kw, 1, "val", "").(string)
	ic, ml := regexFlags(r, args, kw, 2)
	re, err := compilePyRegex(pat, ic, ml)
	if err != nil {
		return nil, err
	}
	// Python's \1 and \g<name> become Go's ${1} and ${name}; a literal $
	// must be doubled.
	goRepl := strings.ReplaceAll(repl, "$", "$$")
	goRepl = pyGroupRef.ReplaceAllStringFunc(goRepl, func(m string) string {
		sm := pyGroupRef.FindStringSubmatch(m)
		if sm[1] != "" {
			return "${" + sm[1] + "}"
		}
		return "${" + sm[2] + "}"
	})
	goRepl = strings.NewReplacer(`\n`, "\n", `\t`, "\t", `\\`, `\`).Replace(goRepl)
	return re.ReplaceAllString(s, goRepl), nil
}

// pyReEscape is Python 3.7+'s re.escape.
func pyReEscape(s string) string {
	var b strings.Builder
	for _, c := range s {
		if c < 0x80 && strings.ContainsRune("()[]{}?*+-|^$\\.&~# \t\n\r\v\f", c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func hashFilter(newHash func() hash.Hash) filterFunc {
	return func(r *runner, v any, _ []any, _ *ordered.Map) (any, error) {
		s, err := r.toStr(v)
		if err != nil {
			return nil, err
		}
		h := newHash()
		h.Write([]byte(s))
		return hex.EncodeToString(h.Sum(nil)), nil
	}
}

func fBase64Encode(r *runner, v any, _ []any, _ *ordered.Map) (any, error) {
	s, err := r.toStr(v)
	if err != nil {
		return nil, err
	}
	return base64.StdEncoding.EncodeToString([]byte(s)), nil
}

func fBase64Decode(r *runner, v any, _ []any, _ *ordered.Map) (any, error) {
	s, err := r.toStr(v)
	if err != nil {
		return nil, err
	}
	out, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, runtimeErr("Incorrect padding")
	}
	if !utf8.Valid(out) {
		return nil, runtimeErr("base64 decoded value is not valid UTF-8")
	}
	return string(out), nil
}

// setFilter implements Salt's union/intersect/difference/
// symmetric_difference for lists (order of first appearance kept).
func setFilter(op string) filterFunc {
	return func(r *runner, v any, args []any, kw *ordered.Map) (any, error) {
		a, err := r.iterate(v)
		if err != nil {
			return nil, err
		}
		if len(args) < 1 {
			return nil, typeErr("%s() missing 1 required positional argument: 'lst2'", op)
		}
		b, err := r.iterate(args[0])
		if err != nil {
			return nil, err
		}
		in := func(x any, list []any) bool {
			for _, y := range list {
				if equal(x, y) {
					return true
				}
			}
			return false
		}
		var out []any
		switch op {
		case "union":
			out = append(append(out, a...), b...)
		case "intersect":
			for _, x := range a {
				if in(x, b) {
					out = append(out, x)
				}
			}
		case "difference":
			for _, x := range a {
				if !in(x, b) {
					out = append(out, x)
				}
			}
		case "symmetric_difference":
			for _, x := range append(append([]any{}, a...), b...) {
				if !(in(x, a) && in(x, b)) {
					out = append(out, x)
				}
			}
		}
		return fUnique(r, newList(out), nil, nil)
	}
}

func fAvg(r *runner, v any, _ []any, _ *ordered.Map) (any, error) {
	items, ok := seqItems(v)
	if !ok {
		f, isNum := numeric(v)
		if !isNum {
			return nil, typeErr("float() argument must be a string or a number, not '%s'", typeName(v))
		}
		return f, nil
	}
	if len(items) == 0 {
		return nil, runtimeErr("division by zero")
	}
	var total any = 0
	for _, it := range items {
		var err error
		if total, err = r.arith("+", total, it); err != nil {
			return nil, err
		}
	}
	f, _ := numeric(total)
	return f / float64(len(items)), nil
}

// fFlatten is salt.utils.data.flatten (levels and preserve_nulls).
func fFlatten(r *runner, v any, args []any, kw *ordered.Map) (any, error) {
	levels := -1
	if l := arg(args, kw, 0, "levels", nil); l != nil {
		levels, _ = asInt(l)
	}
	keepNulls, _ := r.truthy(arg(args, kw, 1, "preserve_nulls", false))
	var walk func(items []any, depth int) []any
	walk = func(items []any, depth int) []any {
		var out []any
		for _, it := range items {
			if it == nil && !keepNulls {
				continue
			}
			if sub, ok := seqItems(it); ok && (levels < 0 || depth < levels) && depth < maxExportDepth {
				out = append(out, walk(sub, depth+1)...)
				continue
			}
			out = append(out, it)
		}
		return out
	}
	items, err := r.iterate(v)
	if err != nil {
		return nil, err
	}
	return newList(walk(items, 0)), nil
}

func fToNum(_ *runner, v any, _ []any, _ *ordered.Map) (any, error) {
	s, ok := v.(string)
	if !ok {
		return v, nil
	}
	if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil {
		return n, nil
	}
	if f, ok := parsePyFloat(s); ok {
		return f, nil
	}
	return s, nil
}

func fExactlyN(n int) filterFunc {
	return func(r *runner, v any, _ []any, _ *ordered.Map) (any, error) {
		items, err := r.iterate(v)
		if err != nil {
			return nil, err
		}
		c := 0
		for _, it := range items {
			if t, _ := r.truthy(it); t {
				c++
			}
		}
		return c == n, nil
	}
}

func fExactlyNArg(r *runner, v any, args []any, kw *ordered.Map) (any, error) {
	n, _ := asInt(arg(args, kw, 0, "amount", 1))
	return fExactlyN(n)(r, v, nil, nil)
}

// fTraverse is salt.utils.data.traverse_dict_and_list: "a:b:0" walks
// into dicts and lists, returning the default when a step is missing.
func fTraverse(r *runner, v any, args []any, kw *ordered.Map) (any, error) {
	key, _ := arg(args, kw, 0, "key", "").(string)
	def := arg(args, kw, 1, "default", nil)
	delim, _ := arg(args, kw, 2, "delimiter", ":").(string)
	cur := v
	for _, part := range strings.Split(key, delim) {
		switch c := cur.(type) {
		case *ordered.Map:
			x, ok := c.Get(part)
			if !ok {
				return def, nil
			}
			cur = x
		case *pyList:
			i, err := strconv.Atoi(part)
			if err != nil || i < -len(c.items) || i >= len(c.items) {
				return def, nil
			}
			if i < 0 {
				i += len(c.items)
			}
			cur = c.items[i]
		default:
			return def, nil
		}
	}
	return cur, nil
}

func fPathJoin(r *runner, v any, args []any, _ *ordered.Map) (any, error) {
	parts := []any{v}
	if items, ok := seqItems(v); ok {
		parts = items
	}
	parts = append(parts, args...)
	out := ""
	for _, p := range parts {
		s, err := r.toStr(p)
		if err != nil {
			return nil, err
		}
		switch {
		case strings.HasPrefix(s, "/"):
			out = s
		case out == "" || strings.HasSuffix(out, "/"):
			out += s
		default:
			out += "/" + s
		}
	}
	return out, nil
}

func fMethodCall(r *runner, v any, args []any, kw *ordered.Map) (any, error) {
	if len(args) < 1 {
		return nil, typeErr("method_call() missing 1 required positional argument: 'f_name'")
	}
	name, _ := args[0].(string)
	m, ok := r.attribute(v, name)
	if !ok {
		return nil, nil
	}
	return r.callValue(m, args[1:], kw)
}

func fToEntries(r *runner, v any, _ []any, _ *ordered.Map) (any, error) {
	m, ok := v.(*ordered.Map)
	if !ok {
		return nil, typeErr("to_entries requires a mapping")
	}
	var out []any
	m.Range(func(k, val any) bool {
		out = append(out, ordered.FromPairs("key", k, "value", val))
		return true
	})
	return newList(out), nil
}

func fFromEntries(r *runner, v any, _ []any, _ *ordered.Map) (any, error) {
	items, err := r.iterate(v)
	if err != nil {
		return nil, err
	}
	m := ordered.New()
	for _, it := range items {
		e, ok := it.(*ordered.Map)
		if !ok {
			continue
		}
		var k, val any
		for _, name := range []string{"key", "k", "name", "Name", "Key"} {
			if x, ok := e.Get(name); ok {
				k = x
				break
			}
		}
		for _, name := range []string{"value", "v", "Value"} {
			if x, ok := e.Get(name); ok {
				val = x
				break
			}
		}
		if hashable(k) {
			m.Set(k, val)
		}
	}
	return m, nil
}

func fSortedIgnorecase(r *runner, v any, _ []any, _ *ordered.Map) (any, error) {
	items, err := r.iterate(v)
	if err != nil {
		return nil, err
	}
	out := append([]any{}, items...)
	sort.SliceStable(out, func(i, j int) bool {
		return strings.ToLower(pyStr(out[i])) < strings.ToLower(pyStr(out[j]))
	})
	return newList(out), nil
}

func fSubstringInList(r *runner, v any, args []any, _ *ordered.Map) (any, error) {
	s, _ := v.(string)
	if len(args) < 1 {
		return false, nil
	}
	items, err := r.iterate(args[0])
	if err != nil {
		return nil, err
	}
	for _, it := range items {
		if x, ok := it.(string); ok && strings.Contains(x, s) {
			return true, nil
		}
	}
	return false, nil
}

func toSnakeCase(s string) string {
	var b strings.Builder
	rs := []rune(s)
	for i, c := range rs {
		if unicode.IsUpper(c) && i > 0 && (unicode.IsLower(rs[i-1]) || i+1 < len(rs) && unicode.IsLower(rs[i+1])) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToLower(c))
	}
	return b.String()
}

func fToCamelCase(r *runner, v any, args []any, kw *ordered.Map) (any, error) {
	s, err := r.toStr(v)
	if err != nil {
		return nil, err
	}
	upperFirst, _ := r.truthy(arg(args, kw, 0, "uppercamel", false))
	parts := strings.Split(s, "_")
	var b strings.Builder
	for i, p := range parts {
		if i == 0 && !upperFirst {
			b.WriteString(p)
			continue
		}
		b.WriteString(capitalize(p))
	}
	return b.String(), nil
}
