package jinja

import (
	"github.com/brinesalt/brine/internal/ordered"
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
	if f, ok := dictMethods[name]; ok {
		return f(r, m, name, args, kw)
	}
	return nil, typeErr("'dict' object has no attribute '%s'", name)
}

// dictMethods holds Python's dict methods by name; init fills it, because the methods
// reach back to it through the runner.
var dictMethods map[string]dictMethodFunc

// dictMethodFunc is one dict method; name is the name it was called by.
type dictMethodFunc func(r *runner, m *ordered.Map, name string, args []any, kw *ordered.Map) (any, error)

func init() {
	dictMethods = map[string]dictMethodFunc{
		"items":      dictMethodItems,
		"iteritems":  dictMethodItems,
		"keys":       dictMethodKeys,
		"iterkeys":   dictMethodKeys,
		"values":     dictMethodValues,
		"itervalues": dictMethodValues,
		"get":        dictMethodGet,
		"has_key":    dictMethodHasKey,
		"update":     dictMethodUpdate,
		"setdefault": dictMethodSetdefault,
		"pop":        dictMethodPop,
		"popitem":    dictMethodPopitem,
		"copy":       dictMethodCopy,
		"clear":      dictMethodClear,
	}
}

func dictMethodItems(_ *runner, m *ordered.Map, _ string, _ []any, _ *ordered.Map) (any, error) {
	out := make([]any, 0, m.Len())
	m.Range(func(k, v any) bool { out = append(out, tuple{k, v}); return true })
	return &dictView{kind: "items", items: out}, nil
}

func dictMethodKeys(_ *runner, m *ordered.Map, _ string, _ []any, _ *ordered.Map) (any, error) {
	return &dictView{kind: "keys", items: m.Keys()}, nil
}

func dictMethodValues(_ *runner, m *ordered.Map, _ string, _ []any, _ *ordered.Map) (any, error) {
	out := make([]any, 0, m.Len())
	m.Range(func(_, v any) bool { out = append(out, v); return true })
	return &dictView{kind: "values", items: out}, nil
}

func dictMethodGet(_ *runner, m *ordered.Map, _ string, args []any, _ *ordered.Map) (any, error) {
	if err := argN("get", args, 1, 2); err != nil {
		return nil, err
	}
	if !hashable(args[0]) && !hashableTuple(args[0]) {
		return nil, typeErr("unhashable type: '%s'", typeName(args[0]))
	}
	if v, ok := lookupKey(m, args[0]); ok {
		return v, nil
	}
	if len(args) == 2 {
		return args[1], nil
	}
	return nil, nil
}

func dictMethodHasKey(_ *runner, m *ordered.Map, _ string, args []any, _ *ordered.Map) (any, error) {
	if err := argN("has_key", args, 1, 1); err != nil {
		return nil, err
	}
	_, ok := lookupKey(m, args[0])
	return ok, nil
}

func dictMethodUpdate(r *runner, m *ordered.Map, _ string, args []any, kw *ordered.Map) (any, error) {
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
}

func dictMethodSetdefault(_ *runner, m *ordered.Map, _ string, args []any, _ *ordered.Map) (any, error) {
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
}

func dictMethodPop(_ *runner, m *ordered.Map, _ string, args []any, _ *ordered.Map) (any, error) {
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
}

func dictMethodPopitem(_ *runner, m *ordered.Map, _ string, _ []any, _ *ordered.Map) (any, error) {
	keys := m.Keys()
	if len(keys) == 0 {
		return nil, runtimeErr("'popitem(): dictionary is empty'")
	}
	k := keys[len(keys)-1]
	v := m.Value(k)
	m.Delete(k)
	return tuple{k, v}, nil
}

func dictMethodCopy(_ *runner, m *ordered.Map, _ string, _ []any, _ *ordered.Map) (any, error) {
	return m.Copy(), nil
}

func dictMethodClear(_ *runner, m *ordered.Map, _ string, _ []any, _ *ordered.Map) (any, error) {
	for _, k := range m.Keys() {
		m.Delete(k)
	}
	return nil, nil
}

// mapKeyIn returns the stored spelling of key k in m.
func mapKeyIn(m *ordered.Map, k any) any {
	if sk, ok := storedKey(m, k); ok {
		return sk
	}
	return k
}

// listMethod implements list methods; tuples reach it only for index and
// count.
func (r *runner) listMethod(l *pyList, name string, args []any) (any, error) {
	if f, ok := listMethods[name]; ok {
		return f(r, l, name, args)
	}
	return nil, typeErr("'list' object has no attribute '%s'", name)
}

// listMethods holds Python's list methods by name; init fills it, because the methods
// reach back to it through the runner.
var listMethods map[string]listMethodFunc

// listMethodFunc is one list method; name is the name it was called by.
type listMethodFunc func(r *runner, l *pyList, name string, args []any) (any, error)

func init() {
	listMethods = map[string]listMethodFunc{
		"append":  listMethodAppend,
		"extend":  listMethodExtend,
		"insert":  listMethodInsert,
		"pop":     listMethodPop,
		"remove":  listMethodRemove,
		"index":   listMethodIndex,
		"count":   listMethodCount,
		"sort":    listMethodSort,
		"reverse": listMethodReverse,
		"copy":    listMethodCopy,
		"clear":   listMethodClear,
	}
}

func listMethodAppend(_ *runner, l *pyList, _ string, args []any) (any, error) {
	if err := argN("append", args, 1, 1); err != nil {
		return nil, err
	}
	l.items = append(l.items, args[0])
	return nil, nil
}

func listMethodExtend(r *runner, l *pyList, _ string, args []any) (any, error) {
	if err := argN("extend", args, 1, 1); err != nil {
		return nil, err
	}
	items, err := r.iterate(args[0])
	if err != nil {
		return nil, err
	}
	l.items = append(l.items, items...)
	return nil, nil
}

func listMethodInsert(_ *runner, l *pyList, _ string, args []any) (any, error) {
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
}

func listMethodPop(_ *runner, l *pyList, _ string, args []any) (any, error) {
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
}

func listMethodRemove(_ *runner, l *pyList, _ string, args []any) (any, error) {
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
}

func listMethodIndex(_ *runner, l *pyList, _ string, args []any) (any, error) {
	if err := argN("index", args, 1, 3); err != nil {
		return nil, err
	}
	for i, x := range l.items {
		if equal(x, args[0]) {
			return i, nil
		}
	}
	return nil, runtimeErr("%s is not in list", pyRepr(args[0]))
}

func listMethodCount(_ *runner, l *pyList, _ string, args []any) (any, error) {
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
}

func listMethodSort(_ *runner, l *pyList, _ string, _ []any) (any, error) {
	items := append([]any{}, l.items...)
	if err := sortValues(items, nil, false); err != nil {
		return nil, err
	}
	l.items = items
	return nil, nil
}

func listMethodReverse(_ *runner, l *pyList, _ string, _ []any) (any, error) {
	n := len(l.items)
	items := make([]any, n)
	for i, x := range l.items {
		items[n-1-i] = x
	}
	l.items = items
	return nil, nil
}

func listMethodCopy(_ *runner, l *pyList, _ string, _ []any) (any, error) {
	return newList(append([]any{}, l.items...)), nil
}

func listMethodClear(_ *runner, l *pyList, _ string, _ []any) (any, error) {
	l.items = []any{}
	return nil, nil
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
