package jinja

import (
	"html"
	"math"
	"strconv"
	"strings"
	"unicode"

	"github.com/brinesalt/brine/internal/ordered"
)

// String and number filters of Jinja2.

func fAbs(_ *runner, v any, _ []any, _ *ordered.Map) (any, error) {
	switch x := v.(type) {
	case int:
		if x < 0 {
			return -x, nil
		}
		return x, nil
	case bool:
		n, _ := asInt(x)
		return n, nil
	case float64:
		return math.Abs(x), nil
	}
	return nil, typeErr("bad operand type for abs(): '%s'", typeName(v))
}

func fCenter(r *runner, v any, args []any, kw *ordered.Map) (any, error) {
	s, err := r.toStr(v)
	if err != nil {
		return nil, err
	}
	w, _ := asInt(arg(args, kw, 0, "width", 80))
	return pyCenter(s, w, ' '), nil
}

func fEscape(r *runner, v any, _ []any, _ *ordered.Map) (any, error) {
	s, err := r.toStr(v)
	if err != nil {
		return nil, err
	}
	return markupEscape(s), nil
}

func markupEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "\"", "&#34;", "'", "&#39;").Replace(s)
}

func fFloat(r *runner, v any, args []any, kw *ordered.Map) (any, error) {
	def := arg(args, kw, 0, "default", 0.0)
	switch x := v.(type) {
	case float64:
		return x, nil
	case int:
		return float64(x), nil
	case bool:
		f, _ := numeric(x)
		return f, nil
	case string:
		if f, ok := parsePyFloat(x); ok {
			return f, nil
		}
	}
	return def, nil
}

func parsePyFloat(s string) (float64, bool) {
	t := strings.ReplaceAll(strings.TrimSpace(s), "_", "")
	switch strings.ToLower(strings.TrimLeft(t, "+-")) {
	case "inf", "infinity", "nan":
		f, err := strconv.ParseFloat(t, 64)
		return f, err == nil
	}
	if strings.ContainsAny(t, "xXpP") {
		return 0, false
	}
	f, err := strconv.ParseFloat(t, 64)
	return f, err == nil
}

func fInt(r *runner, v any, args []any, kw *ordered.Map) (any, error) {
	def := arg(args, kw, 0, "default", 0)
	base, _ := asInt(arg(args, kw, 1, "base", 10))
	switch x := v.(type) {
	case int:
		return x, nil
	case bool:
		n, _ := asInt(x)
		return n, nil
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return def, nil
		}
		return int(x), nil
	case string:
		t := strings.ReplaceAll(strings.TrimSpace(x), "_", "")
		if base == 16 || base == 8 || base == 2 {
			low := strings.ToLower(t)
			for _, p := range []string{"0x", "0o", "0b"} {
				low = strings.TrimPrefix(low, p)
			}
			t = low
		}
		if n, err := strconv.ParseInt(t, base, 64); err == nil {
			return int(n), nil
		}
		if base == 10 {
			if f, ok := parsePyFloat(t); ok && !math.IsInf(f, 0) && !math.IsNaN(f) {
				return int(f), nil
			}
		}
	}
	return def, nil
}

func fFormat(r *runner, v any, args []any, kw *ordered.Map) (any, error) {
	s, err := r.toStr(v)
	if err != nil {
		return nil, err
	}
	if len(args) > 0 && kw.Len() > 0 {
		return nil, runtimeErr("can't handle positional and keyword arguments at the same time")
	}
	if kw.Len() > 0 {
		return percentFormat(r, s, kw)
	}
	return percentFormat(r, s, tuple(args))
}

func fIndent(r *runner, v any, args []any, kw *ordered.Map) (any, error) {
	s, ok := v.(string)
	if !ok {
		if u, isU := v.(*undefined); isU {
			return nil, u.err()
		}
		if _, isList := v.(*pyList); isList {
			return nil, typeErr("'list' object has no attribute 'splitlines'")
		}
		return nil, typeErr("unsupported operand type(s) for +=: '%s' and 'str'", typeName(v))
	}
	width := arg(args, kw, 0, "width", 4)
	first, _ := r.truthy(arg(args, kw, 1, "first", false))
	blank, _ := r.truthy(arg(args, kw, 2, "blank", false))
	ind := ""
	if ws, ok := width.(string); ok {
		ind = ws
	} else {
		n, _ := asInt(width)
		ind = strings.Repeat(" ", max(n, 0))
	}
	s += "\n"
	lines := pySplitLines(s, false)
	var rv string
	if blank {
		rv = strings.Join(lines, "\n"+ind)
	} else if len(lines) > 0 {
		rv = lines[0]
		rest := lines[1:]
		if len(rest) > 0 {
			parts := make([]string, len(rest))
			for i, l := range rest {
				if l != "" {
					l = ind + l
				}
				parts[i] = l
			}
			rv += "\n" + strings.Join(parts, "\n")
		}
	}
	if first {
		rv = ind + rv
	}
	return rv, nil
}

func fReplace(r *runner, v any, args []any, kw *ordered.Map) (any, error) {
	s, err := r.toStr(v)
	if err != nil {
		return nil, err
	}
	old, err := r.toStr(arg(args, kw, 0, "old", ""))
	if err != nil {
		return nil, err
	}
	nw, err := r.toStr(arg(args, kw, 1, "new", ""))
	if err != nil {
		return nil, err
	}
	n, _ := asInt(arg(args, kw, 2, "count", -1))
	if arg(args, kw, 2, "count", nil) == nil {
		n = -1
	}
	return strings.Replace(s, old, nw, n), nil
}

func fRound(r *runner, v any, args []any, kw *ordered.Map) (any, error) {
	prec, _ := asInt(arg(args, kw, 0, "precision", 0))
	method, _ := arg(args, kw, 1, "method", "common").(string)
	f, ok := numeric(v)
	if !ok {
		return nil, typeErr("type %s doesn't define __round__ method", typeName(v))
	}
	p := math.Pow(10, float64(prec))
	switch method {
	case "common":
		if n, isInt := asInt(v); isInt {
			return n, nil
		}
		if prec >= 0 {
			if g, err := strconv.ParseFloat(strconv.FormatFloat(f, 'f', prec, 64), 64); err == nil {
				return g, nil
			}
		}
		return math.RoundToEven(f*p) / p, nil
	case "ceil":
		return math.Ceil(f*p) / p, nil
	case "floor":
		return math.Floor(f*p) / p, nil
	}
	return nil, runtimeErr("method must be common, ceil or floor")
}

func fString(r *runner, v any, _ []any, _ *ordered.Map) (any, error) {
	return r.toStr(v)
}

func fStriptags(r *runner, v any, _ []any, _ *ordered.Map) (any, error) {
	s, err := r.toStr(v)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	in := false
	for _, c := range s {
		switch {
		case c == '<':
			in = true
		case c == '>' && in:
			in = false
		case !in:
			b.WriteRune(c)
		}
	}
	return strings.Join(strings.Fields(html.UnescapeString(b.String())), " "), nil
}

func fTrim(r *runner, v any, args []any, kw *ordered.Map) (any, error) {
	s, err := r.toStr(v)
	if err != nil {
		return nil, err
	}
	chars := arg(args, kw, 0, "chars", nil)
	if c, ok := chars.(string); ok {
		return pyStrip(s, "strip", c, true), nil
	}
	return pyStrip(s, "strip", "", false), nil
}

func fTruncate(r *runner, v any, args []any, kw *ordered.Map) (any, error) {
	length, _ := asInt(arg(args, kw, 0, "length", 255))
	killwords, _ := r.truthy(arg(args, kw, 1, "killwords", false))
	end, _ := arg(args, kw, 2, "end", "...").(string)
	leeway, _ := asInt(arg(args, kw, 3, "leeway", 5))
	s, isStr := v.(string)
	if !isStr {
		// Jinja takes len() of whatever it gets and returns it unchanged
		// when short enough.
		n, err := fLength(r, v, nil, nil)
		if err != nil {
			return nil, err
		}
		if n.(int) <= length+leeway {
			return v, nil
		}
		return nil, typeErr("can only concatenate %s (not \"str\") to %s", typeName(v), typeName(v))
	}
	rs := []rune(s)
	if len(rs) <= length+leeway {
		return s, nil
	}
	cut := max(length-len([]rune(end)), 0)
	if killwords {
		return string(rs[:cut]) + end, nil
	}
	head := string(rs[:cut])
	if i := strings.LastIndex(head, " "); i >= 0 {
		head = head[:i]
	}
	return head + end, nil
}

func fURLEncode(r *runner, v any, _ []any, _ *ordered.Map) (any, error) {
	quote := func(x any, safe string, plus bool) (string, error) {
		s, err := r.toStr(x)
		if err != nil {
			return "", err
		}
		var b strings.Builder
		for _, c := range []byte(s) {
			if c < 0x80 && (unicode.IsLetter(rune(c)) || unicode.IsDigit(rune(c)) || strings.IndexByte("_.-~"+safe, c) >= 0) {
				b.WriteByte(c)
			} else if plus && c == ' ' {
				b.WriteByte('+')
			} else {
				b.WriteString("%" + strings.ToUpper(strconv.FormatInt(int64(c)|0x100, 16)[1:]))
			}
		}
		return b.String(), nil
	}
	if items, ok := seqItems(v); ok {
		var parts []string
		for _, it := range items {
			pair, err := r.iterate(it)
			if err != nil {
				return nil, typeErr("cannot unpack non-iterable %s object", typeName(it))
			}
			if len(pair) > 2 {
				return nil, runtimeErr("too many values to unpack (expected 2)")
			}
			if len(pair) < 2 {
				return nil, runtimeErr("not enough values to unpack (expected 2, got %d)", len(pair))
			}
			ks, err := quote(pair[0], "", true)
			if err != nil {
				return nil, err
			}
			vs, err := quote(pair[1], "", true)
			if err != nil {
				return nil, err
			}
			parts = append(parts, ks+"="+vs)
		}
		return strings.Join(parts, "&"), nil
	}
	if m, ok := v.(*ordered.Map); ok {
		var parts []string
		var err error
		m.Range(func(k, val any) bool {
			var ks, vs string
			if ks, err = quote(k, "", true); err != nil {
				return false
			}
			if vs, err = quote(val, "", true); err != nil {
				return false
			}
			parts = append(parts, ks+"="+vs)
			return true
		})
		return strings.Join(parts, "&"), err
	}
	return quote(v, "/", false)
}

func fWordcount(r *runner, v any, _ []any, _ *ordered.Map) (any, error) {
	s, err := r.toStr(v)
	if err != nil {
		return nil, err
	}
	n := 0
	inWord := false
	for _, c := range s {
		w := unicode.IsLetter(c) || unicode.IsDigit(c) || c == '_'
		if w && !inWord {
			n++
		}
		inWord = w
	}
	return n, nil
}

// fWordwrap is Jinja's wordwrap: each line of the text wrapped on its
// own by Python's textwrap (whitespace kept inside lines, dropped at line
// ends, long words broken).
func fWordwrap(r *runner, v any, args []any, kw *ordered.Map) (any, error) {
	s, ok := v.(string)
	if !ok {
		if u, isU := v.(*undefined); isU {
			return nil, u.err()
		}
		return nil, typeErr("'%s' object has no attribute 'splitlines'", typeName(v))
	}
	width, _ := asInt(arg(args, kw, 0, "width", 79))
	breakLong, _ := r.truthy(arg(args, kw, 1, "break_long_words", true))
	sep, _ := arg(args, kw, 2, "wrapstring", "\n").(string)
	if width <= 0 {
		return nil, runtimeErr("invalid width %d (must be > 0)", width)
	}
	var out []string
	for _, para := range pySplitLines(s, false) {
		out = append(out, strings.Join(textWrap(para, width, breakLong), sep))
	}
	return strings.Join(out, sep), nil
}

// textWrap is textwrap.wrap(expand_tabs=False, replace_whitespace=False)
// for one line: greedy filling of word and whitespace chunks.
func textWrap(text string, width int, breakLong bool) []string {
	var chunks [][]rune
	rs := []rune(text)
	for i := 0; i < len(rs); {
		j := i + 1
		isSpace := unicode.IsSpace(rs[i])
		for j < len(rs) && unicode.IsSpace(rs[j]) == isSpace {
			j++
		}
		chunks = append(chunks, rs[i:j])
		i = j
	}
	space := func(c []rune) bool { return len(c) > 0 && unicode.IsSpace(c[0]) }
	var lines []string
	for len(chunks) > 0 {
		var cur [][]rune
		curLen := 0
		if len(lines) > 0 && space(chunks[0]) {
			chunks = chunks[1:]
		}
		for len(chunks) > 0 && curLen+len(chunks[0]) <= width {
			cur = append(cur, chunks[0])
			curLen += len(chunks[0])
			chunks = chunks[1:]
		}
		if len(chunks) > 0 && len(chunks[0]) > width {
			if breakLong {
				room := max(width-curLen, 1)
				cur = append(cur, chunks[0][:room])
				chunks[0] = chunks[0][room:]
			} else if len(cur) == 0 {
				cur = append(cur, chunks[0])
				chunks = chunks[1:]
			}
		}
		if len(cur) > 0 && space(cur[len(cur)-1]) {
			cur = cur[:len(cur)-1]
		}
		if len(cur) > 0 {
			var b strings.Builder
			for _, c := range cur {
				b.WriteString(string(c))
			}
			lines = append(lines, b.String())
		}
	}
	return lines
}

func fXMLAttr(r *runner, v any, args []any, kw *ordered.Map) (any, error) {
	m, ok := v.(*ordered.Map)
	if !ok {
		return nil, typeErr("'%s' object has no attribute 'items'", typeName(v))
	}
	autospace, _ := r.truthy(arg(args, kw, 0, "autospace", true))
	var parts []string
	var err error
	m.Range(func(k, val any) bool {
		if val == nil {
			return true
		}
		if _, isU := val.(*undefined); isU {
			return true
		}
		var s string
		if s, err = r.toStr(val); err != nil {
			return false
		}
		parts = append(parts, markupEscape(pyStr(k))+"=\""+markupEscape(s)+"\"")
		return true
	})
	out := strings.Join(parts, " ")
	if autospace && out != "" {
		out = " " + out
	}
	return out, err
}

func fFilesize(r *runner, v any, args []any, kw *ordered.Map) (any, error) {
	f, ok := numeric(v)
	if !ok {
		if s, isStr := v.(string); isStr {
			f, ok = parsePyFloat(s)
		}
		if !ok {
			if _, isStr := v.(string); isStr {
				return nil, runtimeErr("could not convert string to float: %s", pyRepr(v))
			}
			return nil, typeErr("float() argument must be a string or a real number, not '%s'", typeName(v))
		}
	}
	binary, _ := r.truthy(arg(args, kw, 0, "binary", false))
	base := 1000.0
	prefixes := []string{"kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB"}
	if binary {
		base = 1024
		prefixes = []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"}
	}
	if f == 1 {
		return "1 Byte", nil
	}
	if f < base {
		return strconv.Itoa(int(f)) + " Bytes", nil
	}
	unit := base
	for i, p := range prefixes {
		unit = math.Pow(base, float64(i+2))
		if f < unit || i == len(prefixes)-1 {
			return strconv.FormatFloat(base*f/unit, 'f', 1, 64) + " " + p, nil
		}
	}
	return nil, nil
}
