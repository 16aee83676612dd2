package jinja

import (
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
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
var undefinedOK = set("default", "d", "skip", "to_bool", "json", "tojson", "abs", "round")

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
		"title":          strFilter(jinjaTitle),
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
	for name, fn := range randomFilters() {
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
		return nil, typeErr("'%s' object has no attribute 'items'", typeName(v))
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

// markupEscape is markupsafe.escape.
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
	switch v.(type) {
	case string, *pyList, tuple, *namedTuple, *ordered.Map, *dictView:
	default:
		return nil, typeErr("'%s' object is not reversible", typeName(v))
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
		return nil, templateErr("argument must be iterable")
	}
	out := make([]any, len(items))
	for i, x := range items {
		out[len(items)-1-i] = x
	}
	return newList(out), nil
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
			if u, isU := k.(*undefined); isU && err == nil && attr != nil && r.strictFor(u) {
				err = u.err()
			}
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
	err = sortValues(items, key, rev)
	if keyErr != nil {
		return nil, keyErr
	}
	if err != nil {
		return nil, err
	}
	return newList(items), nil
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
