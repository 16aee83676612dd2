package jinja

import (
	"html"
	"math"
	"strconv"
	"strings"
	"unicode"

	"github.com/brinesalt/brine/state/ordered"
)

// filterFunc is a template filter: the value, then positional and keyword
// arguments.
type filterFunc func(r *runner, v any, args []any, kw *ordered.Map) (any, error)

// filters maps names to implementations: Jinja2's builtins with Salt's
// overrides (unique, min, max, tojson) and additions. Filled in init to
// allow the recursive references.
var filters map[string]filterFunc

// undefinedOK lists filters that accept an undefined value under
// StrictUndefined without failing.
var undefinedOK = set("default", "d", "skip")

func init() {
	filters = map[string]filterFunc{
		"abs":            fAbs,
		"attr":           fAttr,
		"batch":          fBatch,
		"capitalize":     strFilter(capitalize),
		"center":         fCenter,
		"count":          fLength,
		"d":              fDefault,
		"default":        fDefault,
		"dictsort":       fDictsort,
		"e":              fEscape,
		"escape":         fEscape,
		"forceescape":    fEscape,
		"first":          fFirst,
		"float":          fFloat,
		"format":         fFormat,
		"groupby":        fGroupby,
		"indent":         fIndent,
		"int":            fInt,
		"items":          fItems,
		"join":           fJoin,
		"last":           fLast,
		"length":         fLength,
		"list":           fList,
		"lower":          strFilter(strings.ToLower),
		"map":            fMap,
		"max":            fMax,
		"min":            fMin,
		"pprint":         func(r *runner, v any, _ []any, _ *ordered.Map) (any, error) { return pyRepr(v), nil },
		"reject":         selectFilter(false, false),
		"rejectattr":     selectFilter(false, true),
		"replace":        fReplace,
		"reverse":        fReverse,
		"round":          fRound,
		"safe":           fString,
		"select":         selectFilter(true, false),
		"selectattr":     selectFilter(true, true),
		"slice":          fSlice,
		"sort":           fSort,
		"string":         fString,
		"striptags":      fStriptags,
		"sum":            fSum,
		"title":          strFilter(pyTitle),
		"trim":           fTrim,
		"truncate":       fTruncate,
		"unique":         fUnique,
		"upper":          strFilter(pyUpper),
		"urlencode":      fURLEncode,
		"wordcount":      fWordcount,
		"wordwrap":       fWordwrap,
		"xmlattr":        fXMLAttr,
		"filesizeformat": fFilesize,
		"keys":           fKeys,
		"values":         fValues,
	}
	for name, fn := range saltFilters() {
		filters[name] = fn
	}
	for name, fn := range extraFilters() {
		filters[name] = fn
	}
}

// arg returns argument i (or keyword name), else def.
func arg(args []any, kw *ordered.Map, i int, name string, def any) any {
	if i < len(args) {
		return args[i]
	}
	if v, ok := kw.Get(name); ok {
		return v
	}
	return def
}

func (r *runner) applyFilter(fl *filterExpr, v any, f *frame) (any, error) {
	fn, ok := filters[fl.name]
	if !ok {
		// Only a filter in an if statement gets here (see checkNames).
		return nil, &tplError{kind: kindSyntax, msg: "No filter named '" + fl.name + "' found.", line: fl.line}
	}
	args, kw, err := r.evalArgs(fl.args, fl.kwnames, fl.kwvals, fl.star, fl.dstar, f)
	if err != nil {
		return nil, err
	}
	if u, isU := v.(*undefined); isU && r.strictFor(u) && !undefinedOK[fl.name] {
		return nil, u.err()
	}
	return fn(r, v, args, kw)
}

func strFilter(fn func(string) string) filterFunc {
	return func(r *runner, v any, _ []any, _ *ordered.Map) (any, error) {
		s, err := r.toStr(v)
		if err != nil {
			return nil, err
		}
		return fn(s), nil
	}
}

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

func fAttr(r *runner, v any, args []any, kw *ordered.Map) (any, error) {
	name, _ := arg(args, kw, 0, "name", "").(string)
	if v, ok := r.attribute(v, name); ok && !strings.HasPrefix(name, "_") {
		return v, nil
	}
	return &undefined{obj: v, hasObj: true, name: name}, nil
}

func fBatch(r *runner, v any, args []any, kw *ordered.Map) (any, error) {
	items, err := r.iterate(v)
	if err != nil {
		return nil, err
	}
	n, ok := asInt(arg(args, kw, 0, "linecount", nil))
	if !ok || n <= 0 {
		return nil, runtimeErr("batch linecount must be a positive integer")
	}
	fill, hasFill := kw.Get("fill_with")
	if len(args) > 1 {
		fill, hasFill = args[1], true
	}
	var out []any
	for i := 0; i < len(items); i += n {
		chunk := append([]any{}, items[i:min(i+n, len(items))]...)
		if hasFill && fill != nil {
			for len(chunk) < n {
				chunk = append(chunk, fill)
			}
		}
		out = append(out, newList(chunk))
	}
	return newList(out), nil
}

func fCenter(r *runner, v any, args []any, kw *ordered.Map) (any, error) {
	s, err := r.toStr(v)
	if err != nil {
		return nil, err
	}
	w, _ := asInt(arg(args, kw, 0, "width", 80))
	return pad(s, w, ' ', '^'), nil
}

func fDefault(r *runner, v any, args []any, kw *ordered.Map) (any, error) {
	def := arg(args, kw, 0, "default_value", "")
	boolean, err := r.truthy(arg(args, kw, 1, "boolean", false))
	if err != nil {
		return nil, err
	}
	if _, ok := v.(*undefined); ok {
		return def, nil
	}
	if boolean {
		t, err := r.truthy(v)
		if err != nil {
			return nil, err
		}
		if !t {
			return def, nil
		}
	}
	return v, nil
}

func fDictsort(r *runner, v any, args []any, kw *ordered.Map) (any, error) {
	m, ok := v.(*ordered.Map)
	if !ok {
		return nil, runtimeErr("You can only sort by either \"key\" or \"value\"")
	}
	cs, _ := r.truthy(arg(args, kw, 0, "case_sensitive", false))
	by, _ := arg(args, kw, 1, "by", "key").(string)
	rev, _ := r.truthy(arg(args, kw, 2, "reverse", false))
	pos := 0
	switch by {
	case "key":
	case "value":
		pos = 1
	default:
		return nil, runtimeErr("You can only sort by either \"key\" or \"value\"")
	}
	var items []any
	m.Range(func(k, val any) bool { items = append(items, tuple{k, val}); return true })
	err := sortValues(items, func(x any) any {
		e := x.(tuple)[pos]
		if s, ok := e.(string); ok && !cs {
			return strings.ToLower(s)
		}
		return e
	}, rev)
	return newList(items), err
}

func fEscape(r *runner, v any, _ []any, _ *ordered.Map) (any, error) {
	s, err := r.toStr(v)
	if err != nil {
		return nil, err
	}
	return markupEscape(s), nil
}

// markupEscape is markupsafe.escape.
func markupEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "\"", "&#34;", "'", "&#39;").Replace(s)
}

func fFirst(r *runner, v any, _ []any, _ *ordered.Map) (any, error) {
	items, err := r.iterate(v)
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return &undefined{hint: "No first item, sequence was empty."}, nil
	}
	return items[0], nil
}

func fLast(r *runner, v any, _ []any, _ *ordered.Map) (any, error) {
	if _, ok := v.(*ordered.Map); ok {
		return nil, typeErr("'dict' object is not reversible")
	}
	items, err := r.iterate(v)
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return &undefined{hint: "No last item, sequence was empty."}, nil
	}
	return items[len(items)-1], nil
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

func fGroupby(r *runner, v any, args []any, kw *ordered.Map) (any, error) {
	items, err := r.iterate(v)
	if err != nil {
		return nil, err
	}
	attr := arg(args, kw, 0, "attribute", nil)
	def, hasDef := kw.Get("default")
	keyOf := func(x any) (any, error) {
		k, err := r.attrPath(x, attr)
		if err != nil {
			return nil, err
		}
		if _, ok := k.(*undefined); ok && hasDef {
			return def, nil
		}
		return k, nil
	}
	keys := make([]any, len(items))
	for i, it := range items {
		if keys[i], err = keyOf(it); err != nil {
			return nil, err
		}
		if u, ok := keys[i].(*undefined); ok && r.strictFor(u) {
			return nil, u.err()
		}
	}
	idx := make([]any, len(items))
	for i := range idx {
		idx[i] = i
	}
	if err := sortValues(idx, func(x any) any { return keys[x.(int)] }, false); err != nil {
		return nil, err
	}
	var out []any
	for _, x := range idx {
		i := x.(int)
		if n := len(out); n > 0 && equal(out[n-1].(*namedTuple).vals[0], keys[i]) {
			g := out[n-1].(*namedTuple).vals[1].(*pyList)
			g.items = append(g.items, items[i])
			continue
		}
		out = append(out, &namedTuple{names: []string{"grouper", "list"}, vals: tuple{keys[i], newList([]any{items[i]})}})
	}
	return newList(out), nil
}

// attrPath resolves Jinja's attribute argument: "a.b" or "a.0" digs into
// nested values, an int indexes.
func (r *runner) attrPath(v, attr any) (any, error) {
	if attr == nil {
		return v, nil
	}
	s, ok := attr.(string)
	if !ok {
		return r.getitem(v, attr)
	}
	for _, part := range strings.Split(s, ".") {
		var key any = part
		if n, err := strconv.Atoi(part); err == nil {
			key = n
		}
		nv, err := r.getitem(v, key)
		if err != nil {
			return nil, err
		}
		v = nv
	}
	return v, nil
}

func fIndent(r *runner, v any, args []any, kw *ordered.Map) (any, error) {
	s, err := r.toStr(v)
	if err != nil {
		return nil, err
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

func fItems(r *runner, v any, _ []any, _ *ordered.Map) (any, error) {
	switch m := v.(type) {
	case *ordered.Map:
		v, err := r.dictMethod(m, "items", nil, ordered.New())
		if err != nil {
			return nil, err
		}
		return newList(v.(*dictView).items), nil
	case *undefined:
		return newList(nil), nil
	}
	return nil, typeErr("Can only get item pairs from a mapping.")
}

func fKeys(r *runner, v any, _ []any, _ *ordered.Map) (any, error) {
	m, ok := v.(*ordered.Map)
	if !ok {
		return nil, typeErr("'%s' object has no attribute 'keys'", typeName(v))
	}
	return newList(m.Keys()), nil
}

func fValues(r *runner, v any, _ []any, _ *ordered.Map) (any, error) {
	m, ok := v.(*ordered.Map)
	if !ok {
		return nil, typeErr("'%s' object has no attribute 'values'", typeName(v))
	}
	return r.dictMethod(m, "values", nil, ordered.New())
}

func fJoin(r *runner, v any, args []any, kw *ordered.Map) (any, error) {
	items, err := r.iterate(v)
	if err != nil {
		return nil, err
	}
	sep, err := r.toStr(arg(args, kw, 0, "d", ""))
	if err != nil {
		return nil, err
	}
	attr := arg(args, kw, 1, "attribute", nil)
	parts := make([]string, len(items))
	for i, it := range items {
		if attr != nil {
			if it, err = r.attrPath(it, attr); err != nil {
				return nil, err
			}
		}
		if parts[i], err = r.toStr(it); err != nil {
			return nil, err
		}
	}
	return strings.Join(parts, sep), nil
}

func fLength(r *runner, v any, _ []any, _ *ordered.Map) (any, error) {
	switch x := v.(type) {
	case string:
		return len([]rune(x)), nil
	case *pyList:
		return len(x.items), nil
	case tuple:
		return len(x), nil
	case *dictView:
		return len(x.items), nil
	case *ordered.Map:
		return x.Len(), nil
	case *undefined:
		return 0, nil
	}
	return nil, typeErr("object of type '%s' has no len()", typeName(v))
}

func fList(r *runner, v any, _ []any, _ *ordered.Map) (any, error) {
	items, err := r.iterate(v)
	if err != nil {
		return nil, err
	}
	return newList(append([]any{}, items...)), nil
}

func fMap(r *runner, v any, args []any, kw *ordered.Map) (any, error) {
	items, err := r.iterate(v)
	if err != nil {
		return nil, err
	}
	out := make([]any, 0, len(items))
	if attr, ok := kw.Get("attribute"); ok && len(args) == 0 {
		def, hasDef := kw.Get("default")
		for _, it := range items {
			x, err := r.attrPath(it, attr)
			if err != nil {
				return nil, err
			}
			if _, isU := x.(*undefined); isU && hasDef {
				x = def
			}
			out = append(out, x)
		}
		return newList(out), nil
	}
	if len(args) == 0 {
		return nil, runtimeErr("map requires a filter argument")
	}
	name, _ := args[0].(string)
	fn, ok := filters[name]
	if !ok {
		return nil, &tplError{kind: kindSyntax, msg: "No filter named '" + name + "'."}
	}
	for _, it := range items {
		if u, isU := it.(*undefined); isU && r.strictFor(u) && !undefinedOK[name] {
			return nil, u.err()
		}
		x, err := fn(r, it, args[1:], kw)
		if err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return newList(out), nil
}

// minMax is Salt's min/max filters (Python's min(obj)/max(obj)), which
// replace Jinja's and also accept Jinja's attribute argument.
func minMax(want int) filterFunc {
	return func(r *runner, v any, args []any, kw *ordered.Map) (any, error) {
		items, err := r.iterate(v)
		if err != nil {
			return nil, err
		}
		if len(items) == 0 {
			name := "min"
			if want > 0 {
				name = "max"
			}
			return nil, runtimeErr("%s() arg is an empty sequence", name)
		}
		attr, _ := kw.Get("attribute")
		best := items[0]
		bk, err := r.attrPath(best, attr)
		if err != nil {
			return nil, err
		}
		for _, it := range items[1:] {
			k, err := r.attrPath(it, attr)
			if err != nil {
				return nil, err
			}
			c, err := compare(k, bk, map[int]string{1: ">", -1: "<"}[want])
			if err != nil {
				return nil, err
			}
			if c == want {
				best, bk = it, k
			}
		}
		return best, nil
	}
}

func fMin(r *runner, v any, args []any, kw *ordered.Map) (any, error) {
	return minMax(-1)(r, v, args, kw)
}

func fMax(r *runner, v any, args []any, kw *ordered.Map) (any, error) {
	return minMax(1)(r, v, args, kw)
}

func selectFilter(keep, byAttr bool) filterFunc {
	return func(r *runner, v any, args []any, kw *ordered.Map) (any, error) {
		items, err := r.iterate(v)
		if err != nil {
			return nil, err
		}
		var attr any
		if byAttr {
			if len(args) == 0 {
				return nil, runtimeErr("Missing parameter for attribute name")
			}
			attr, args = args[0], args[1:]
		}
		var test testFunc
		var targs []any
		if len(args) > 0 {
			name, _ := args[0].(string)
			t, ok := tests[name]
			if !ok {
				return nil, &tplError{kind: kindSyntax, msg: "No test named '" + name + "'."}
			}
			test, targs = t, args[1:]
		}
		out := []any{}
		for _, it := range items {
			x := it
			if byAttr {
				if x, err = r.attrPath(it, attr); err != nil {
					return nil, err
				}
			}
			var ok bool
			if test == nil {
				ok, err = r.truthy(x)
			} else {
				ok, err = test(r, x, targs)
			}
			if err != nil {
				return nil, err
			}
			if ok == keep {
				out = append(out, it)
			}
		}
		return newList(out), nil
	}
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

func fReverse(r *runner, v any, _ []any, _ *ordered.Map) (any, error) {
	if s, ok := v.(string); ok {
		rs := []rune(s)
		for i, j := 0, len(rs)-1; i < j; i, j = i+1, j-1 {
			rs[i], rs[j] = rs[j], rs[i]
		}
		return string(rs), nil
	}
	items, err := r.iterate(v)
	if err != nil {
		return nil, err
	}
	out := make([]any, len(items))
	for i, x := range items {
		out[len(items)-1-i] = x
	}
	return newList(out), nil
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
		if n, isInt := v.(int); isInt {
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

func fSlice(r *runner, v any, args []any, kw *ordered.Map) (any, error) {
	items, err := r.iterate(v)
	if err != nil {
		return nil, err
	}
	n, ok := asInt(arg(args, kw, 0, "slices", nil))
	if !ok || n <= 0 {
		return nil, runtimeErr("slices must be a positive integer")
	}
	fill, hasFill := kw.Get("fill_with")
	if len(args) > 1 {
		fill, hasFill = args[1], true
	}
	per, extra := len(items)/n, len(items)%n
	offset := 0
	var out []any
	for i := 0; i < n; i++ {
		start := offset + i*per
		if i < extra {
			offset++
		}
		end := offset + (i+1)*per
		chunk := append([]any{}, items[start:end]...)
		if hasFill && fill != nil && i >= extra {
			chunk = append(chunk, fill)
		}
		out = append(out, newList(chunk))
	}
	return newList(out), nil
}

func fSort(r *runner, v any, args []any, kw *ordered.Map) (any, error) {
	items, err := r.iterate(v)
	if err != nil {
		return nil, err
	}
	items = append([]any{}, items...)
	rev, _ := r.truthy(arg(args, kw, 0, "reverse", false))
	cs, _ := r.truthy(arg(args, kw, 1, "case_sensitive", false))
	attr := arg(args, kw, 2, "attribute", nil)
	// Jinja's make_multi_attrgetter: "a,b" sorts by a, then b.
	attrs := []any{attr}
	if s, ok := attr.(string); ok && strings.Contains(s, ",") {
		attrs = attrs[:0]
		for _, part := range strings.Split(s, ",") {
			attrs = append(attrs, part)
		}
	}
	var keyErr error
	key := func(x any) any {
		var parts tuple
		for _, a := range attrs {
			k, err := r.attrPath(x, a)
			if err != nil && keyErr == nil {
				keyErr = err
			}
			if s, ok := k.(string); ok && !cs {
				k = strings.ToLower(s)
			}
			parts = append(parts, k)
		}
		if len(parts) == 1 {
			return parts[0]
		}
		return parts
	}
	if err := sortValues(items, key, rev); err != nil {
		return nil, err
	}
	return newList(items), keyErr
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

func fSum(r *runner, v any, args []any, kw *ordered.Map) (any, error) {
	items, err := r.iterate(v)
	if err != nil {
		return nil, err
	}
	attr := arg(args, kw, 0, "attribute", nil)
	var total any = arg(args, kw, 1, "start", 0)
	for _, it := range items {
		x, err := r.attrPath(it, attr)
		if err != nil {
			return nil, err
		}
		if total, err = r.arith("+", total, x); err != nil {
			return nil, err
		}
	}
	return total, nil
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
	s, err := r.toStr(v)
	if err != nil {
		return nil, err
	}
	length, _ := asInt(arg(args, kw, 0, "length", 255))
	killwords, _ := r.truthy(arg(args, kw, 1, "killwords", false))
	end, _ := arg(args, kw, 2, "end", "...").(string)
	leeway, _ := asInt(arg(args, kw, 3, "leeway", 5))
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

// fUnique is Salt's unique filter: first occurrences in order.
func fUnique(r *runner, v any, _ []any, _ *ordered.Map) (any, error) {
	items, err := r.iterate(v)
	if err != nil {
		return nil, err
	}
	out := []any{}
	for _, it := range items {
		dup := false
		for _, o := range out {
			if equal(o, it) {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, it)
		}
	}
	return newList(out), nil
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

func fWordwrap(r *runner, v any, args []any, kw *ordered.Map) (any, error) {
	s, err := r.toStr(v)
	if err != nil {
		return nil, err
	}
	width, _ := asInt(arg(args, kw, 0, "width", 79))
	sep, _ := arg(args, kw, 2, "wrapstring", "\n").(string)
	var lines []string
	for _, para := range pySplitLines(s, false) {
		line := ""
		for _, w := range strings.Fields(para) {
			switch {
			case line == "":
				line = w
			case len([]rune(line))+1+len([]rune(w)) <= width:
				line += " " + w
			default:
				lines = append(lines, line)
				line = w
			}
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, sep), nil
}

func fXMLAttr(r *runner, v any, args []any, kw *ordered.Map) (any, error) {
	m, ok := v.(*ordered.Map)
	if !ok {
		return nil, typeErr("xmlattr requires a mapping")
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
			return nil, runtimeErr("could not convert %s to float", pyRepr(v))
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
