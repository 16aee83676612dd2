package jinja

import (
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
)

// Values inside the engine are Brine's value model (nil, bool, int,
// float64, string, []any, *ordered.Map) plus the few Python objects a
// template can make: tuples, namespaces, macros, loop objects, bound
// methods, imported modules and undefined values.

// tuple is a Python tuple: printed with parentheses, immutable.
type tuple []any

// pyList is a Python list. It is a pointer so that list.append() in a
// {% do %} is seen by every holder of the list, as in Python. Values
// crossing the package boundary are converted to and from []any.
type pyList struct{ items []any }

// namedTuple is a tuple whose items also have names, like the
// (grouper, list) pairs of the groupby filter.
type namedTuple struct {
	names []string
	vals  tuple
}

func (n *namedTuple) field(name string) (any, bool) {
	for i, x := range n.names {
		if x == name {
			return n.vals[i], true
		}
	}
	return nil, false
}

// plainTuple unwraps a namedTuple so that comparisons treat it as the
// tuple it is.
func plainTuple(v any) any {
	if n, ok := v.(*namedTuple); ok {
		return n.vals
	}
	return v
}

// dictView is what dict.keys(), .values() and .items() return: iterable
// and sized, printed as dict_keys([...]), but not indexable.
type dictView struct {
	kind  string // "keys", "values" or "items"
	items []any
}

func newList(items []any) *pyList {
	if items == nil {
		items = []any{}
	}
	return &pyList{items: items}
}

// namespace is jinja2's namespace() object, the one thing {% set ns.x %}
// may assign into.
type namespace struct{ attrs *ordered.Map }

// undefined is a missing value. It carries what Jinja needs to build the
// "'x' is undefined" message when it is used.
type undefined struct {
	name   string
	obj    any
	hasObj bool
	hint   string
	intKey bool
	key    any
	// lenient marks jinja2.Undefined inside a strict environment.
	lenient bool
}

// strictFor reports whether using u fails: under StrictUndefined, except
// for the plain Undefined Jinja always uses for an inline if without else.
func (r *runner) strictFor(u *undefined) bool { return r.strict && !u.lenient }

func (u *undefined) message() string {
	switch {
	case u.hint != "":
		return u.hint
	case !u.hasObj:
		return fmt.Sprintf("'%s' is undefined", u.name)
	case u.intKey:
		return fmt.Sprintf("%s has no element %s", objectTypeRepr(u.obj), pyRepr(u.key))
	}
	return fmt.Sprintf("%s has no attribute %s", pyRepr(objectTypeRepr(u.obj)), pyRepr(u.name))
}

func (u *undefined) err() error {
	return &tplError{kind: kindUndefined, msg: u.message()}
}

// objectTypeRepr mirrors jinja2.utils.object_type_repr.
func objectTypeRepr(v any) string {
	switch v.(type) {
	case nil:
		return "None"
	case *namespace:
		return "jinja2.utils.Namespace object"
	case *cyclerObj:
		return "jinja2.utils.Cycler object"
	case *module:
		return "jinja2.runtime.TemplateModule object"
	case *loopObj:
		return "jinja2.runtime.LoopContext object"
	case *macro:
		return "jinja2.runtime.Macro object"
	}
	return typeName(v) + " object"
}

// callable is anything a template can call.
type callable interface {
	call(r *runner, args []any, kw *ordered.Map) (any, error)
}

// typeName is Python's type(v).__name__.
func typeName(v any) string {
	switch x := v.(type) {
	case nil:
		return "NoneType"
	case bool:
		return "bool"
	case int:
		return "int"
	case float64:
		return "float"
	case string:
		return "str"
	case *pyList:
		return "list"
	case tuple, *namedTuple:
		return "tuple"
	case *dictView:
		return "dict_" + x.kind
	case *ordered.Map:
		return "dict"
	case *namespace:
		return "Namespace"
	case *macro:
		return "Macro"
	case *loopObj:
		return "LoopContext"
	case *undefined:
		return "StrictUndefined"
	case *module:
		return "TemplateModule"
	case *boundMethod, *builtinFunc:
		return "builtin_function_or_method"
	case *saltProxy:
		return "salt.loader.lazy.LazyLoader"
	}
	return fmt.Sprintf("%T", v)
}

// truthy is Python's bool(v); undefined values fail under StrictUndefined.
func (r *runner) truthy(v any) (bool, error) {
	switch x := v.(type) {
	case nil:
		return false, nil
	case bool:
		return x, nil
	case int:
		return x != 0, nil
	case float64:
		return x != 0, nil
	case string:
		return x != "", nil
	case *pyList:
		return len(x.items) > 0, nil
	case tuple:
		return len(x) > 0, nil
	case *ordered.Map:
		return x.Len() > 0, nil
	case *dictView:
		return len(x.items) > 0, nil
	case *undefined:
		if r.strictFor(x) {
			return false, x.err()
		}
		return false, nil
	}
	return true, nil
}

// toStr is Python's str(v) as Jinja prints it, with Salt's finalizer
// making dicts print like {'a': 1}.
func (r *runner) toStr(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case *undefined:
		if r.strictFor(x) {
			return "", x.err()
		}
		return "", nil
	case *module:
		return x.output, nil
	}
	return pyStr(v), nil
}

// pyStr is str() for defined values.
func pyStr(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case *module:
		return x.output
	case *undefined:
		return ""
	}
	return pyRepr(v)
}

// pyRepr is Python's repr().
func pyRepr(v any) string {
	var b strings.Builder
	writeRepr(&b, v)
	return b.String()
}

func writeRepr(b *strings.Builder, v any) {
	reprSeen(b, v, map[any]bool{})
}

// reprSeen is writeRepr with Python's guard against self-containing
// lists and dicts, which print as [...] and {...}.
func reprSeen(b *strings.Builder, v any, seen map[any]bool) {
	switch x := v.(type) {
	case nil, bool, int, float64, string:
		b.WriteString(py.Repr(x))
	case *pyList:
		if seen[x] {
			b.WriteString("[...]")
			return
		}
		seen[x] = true
		defer delete(seen, x)
		b.WriteByte('[')
		for i, e := range x.items {
			if i > 0 {
				b.WriteString(", ")
			}
			reprSeen(b, e, seen)
		}
		b.WriteByte(']')
	case *namedTuple:
		reprSeen(b, x.vals, seen)
	case *dictView:
		b.WriteString("dict_" + x.kind + "(")
		reprSeen(b, newList(x.items), seen)
		b.WriteByte(')')
	case tuple:
		b.WriteByte('(')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			reprSeen(b, e, seen)
		}
		if len(x) == 1 {
			b.WriteByte(',')
		}
		b.WriteByte(')')
	case *ordered.Map:
		if seen[x] {
			b.WriteString("{...}")
			return
		}
		seen[x] = true
		defer delete(seen, x)
		py.WriteDict(b, x, func(e any) { reprSeen(b, e, seen) })
	case *namespace:
		b.WriteString("<Namespace ")
		reprSeen(b, x.attrs, seen)
		b.WriteByte('>')
	case *macro:
		fmt.Fprintf(b, "<Macro '%s'>", x.def.name)
	case *undefined:
		b.WriteString("Undefined") // Undefined.__repr__, for every subclass
	case *module:
		fmt.Fprintf(b, "<TemplateModule '%s'>", x.name)
	default:
		fmt.Fprintf(b, "<%s object>", typeName(v))
	}
}

// seqItems returns the elements of a list or tuple.
func seqItems(v any) ([]any, bool) {
	switch x := v.(type) {
	case *pyList:
		return x.items, true
	case tuple:
		return []any(x), true
	case *namedTuple:
		return []any(x.vals), true
	}
	return nil, false
}

// iterate lists the items "for x in v" visits.
func (r *runner) iterate(v any) ([]any, error) {
	switch x := v.(type) {
	case *pyList:
		return x.items, nil
	case tuple:
		return []any(x), nil
	case *namedTuple:
		return []any(x.vals), nil
	case *dictView:
		return x.items, nil
	case *ordered.Map:
		return x.Keys(), nil
	case string:
		out := make([]any, 0, len(x))
		for _, c := range x {
			out = append(out, string(c))
		}
		return out, nil
	case *undefined:
		if r.strictFor(x) {
			return nil, x.err()
		}
		return nil, nil
	case *namespace:
		return nil, typeErr("'Namespace' object is not iterable")
	case *loopObj:
		return nil, typeErr("'LoopContext' object is not iterable")
	}
	return nil, typeErr("'%s' object is not iterable", typeName(v))
}

// equal is Python's ==.
func equal(a, b any) bool { return equalDepth(a, b, 0) }

// maxCompareDepth stops comparisons of self-containing values, where
// Python raises RecursionError.
const maxCompareDepth = 500

func equalDepth(a, b any, depth int) bool {
	if depth > maxCompareDepth {
		return false
	}
	a, b = plainTuple(a), plainTuple(b)
	if pa, ok := a.(*pyList); ok {
		if pb, ok := b.(*pyList); ok && pa == pb {
			return true
		}
	}
	if ma, ok := a.(*ordered.Map); ok {
		if mb, ok := b.(*ordered.Map); ok && ma == mb {
			return true
		}
	}
	if fa, ok := numeric(a); ok {
		if fb, ok := numeric(b); ok {
			return fa == fb
		}
		return false
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		return ok && x == y
	case *pyList, tuple:
		xs, _ := seqItems(a)
		ys, ok := seqItems(b)
		if !ok || len(xs) != len(ys) {
			return false
		}
		if _, l1 := a.(*pyList); l1 {
			if _, l2 := b.(*pyList); !l2 {
				return false
			}
		}
		if _, t1 := a.(tuple); t1 {
			if _, t2 := b.(tuple); !t2 {
				return false
			}
		}
		for i := range xs {
			if !equalDepth(xs[i], ys[i], depth+1) {
				return false
			}
		}
		return true
	case *ordered.Map:
		y, ok := b.(*ordered.Map)
		if !ok || x.Len() != y.Len() {
			return false
		}
		same := true
		x.Range(func(k, v any) bool {
			w, ok := y.Get(k)
			if !ok || !equalDepth(v, w, depth+1) {
				same = false
			}
			return same
		})
		return same
	case *undefined:
		_, ok := b.(*undefined)
		return ok
	}
	if a == nil || b == nil || !reflect.TypeOf(a).Comparable() || !reflect.TypeOf(b).Comparable() {
		return false
	}
	return a == b
}

// numeric reports bools, ints and floats as a float64 for comparison.
func numeric(v any) (float64, bool) {
	switch x := v.(type) {
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	case int:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// compare is Python's ordering, failing as Python does on mixed types.
func compare(a, b any, op string) (int, error) { return compareDepth(a, b, op, 0) }

func compareDepth(a, b any, op string, depth int) (int, error) {
	if depth > maxCompareDepth {
		return 0, runtimeErr("maximum recursion depth exceeded in comparison")
	}
	a, b = plainTuple(a), plainTuple(b)
	if fa, ok := numeric(a); ok {
		if fb, ok := numeric(b); ok {
			ia, aInt := asInt(a)
			ib, bInt := asInt(b)
			if aInt && bInt {
				return cmpInt(ia, ib), nil
			}
			switch {
			case fa < fb:
				return -1, nil
			case fa > fb:
				return 1, nil
			}
			return 0, nil
		}
	}
	switch x := a.(type) {
	case string:
		if y, ok := b.(string); ok {
			return strings.Compare(x, y), nil
		}
	case *pyList, tuple:
		xs, _ := seqItems(a)
		ys, ok := seqItems(b)
		_, l1 := a.(*pyList)
		_, l2 := b.(*pyList)
		if ok && l1 == l2 {
			for i := 0; i < len(xs) && i < len(ys); i++ {
				if equal(xs[i], ys[i]) {
					continue
				}
				return compareDepth(xs[i], ys[i], op, depth+1)
			}
			return cmpInt(len(xs), len(ys)), nil
		}
	}
	return 0, typeErr("'%s' not supported between instances of '%s' and '%s'", op, typeName(a), typeName(b))
}

func asInt(v any) (int, bool) {
	switch x := v.(type) {
	case int:
		return x, true
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// contains is Python's "item in container".
func (r *runner) contains(container, item any) (bool, error) {
	switch c := container.(type) {
	case string:
		s, ok := item.(string)
		if !ok {
			return false, typeErr("'in <string>' requires string as left operand, not %s", typeName(item))
		}
		return strings.Contains(c, s), nil
	case *pyList, tuple, *dictView:
		if u, ok := item.(*undefined); ok && r.strictFor(u) && seqLen(c)+dictViewLen(c) > 0 {
			return false, u.err() // list.__contains__ calls StrictUndefined.__eq__
		}
		xs, _ := r.iterate(c)
		for _, x := range xs {
			if equal(x, item) {
				return true, nil
			}
		}
		return false, nil
	case *ordered.Map:
		if u, ok := item.(*undefined); ok {
			if r.strictFor(u) {
				return false, u.err() // hash(StrictUndefined) fails
			}
			return false, nil
		}
		if hashableTuple(item) {
			return false, nil // dict keys are never tuples in Brine's model
		}
		if !hashable(item) {
			return false, typeErr("unhashable type: '%s'", typeName(item))
		}
		_, ok := lookupKey(c, item)
		return ok, nil
	case *saltProxy:
		s, _ := item.(string)
		return c.has(r, s), nil
	case *undefined:
		if r.strictFor(c) {
			return false, c.err()
		}
		return false, nil
	}
	return false, typeErr("argument of type '%s' is not iterable", typeName(container))
}

// hashableTuple reports a tuple of hashable items, which Python accepts
// as a dict key.
func hashableTuple(v any) bool {
	t, ok := plainTuple(v).(tuple)
	if !ok {
		return false
	}
	for _, x := range t {
		if !hashable(x) && !hashableTuple(x) {
			return false
		}
	}
	return true
}

func hashable(v any) bool {
	switch v.(type) {
	case nil, bool, int, float64, string:
		return true
	}
	return false
}

// keyAliases lists the other spellings of a numeric key that Python's
// hash equality treats as the same dict key (1, 1.0, True).
func keyAliases(k any) []any {
	switch x := k.(type) {
	case bool:
		n, _ := asInt(x)
		return []any{n, float64(n)}
	case int:
		out := []any{float64(x)}
		if x == 0 || x == 1 {
			out = append(out, x == 1)
		}
		return out
	case float64:
		if x != math.Trunc(x) || math.Abs(x) >= 1e18 {
			return nil
		}
		out := []any{int(x)}
		if x == 0 || x == 1 {
			out = append(out, x == 1)
		}
		return out
	}
	return nil
}

// storedKey returns the spelling under which k (or an alias) is stored.
func storedKey(m *ordered.Map, k any) (any, bool) {
	if !hashable(k) {
		return nil, false // includes tuples, which Brine's keys never are
	}
	if m.Has(k) {
		return k, true
	}
	for _, a := range keyAliases(k) {
		if m.Has(a) {
			return a, true
		}
	}
	return nil, false
}

// lookupKey finds k in m honouring Python's hash equality of numbers.
func lookupKey(m *ordered.Map, k any) (any, bool) {
	sk, ok := storedKey(m, k)
	if !ok {
		return nil, false
	}
	return m.Get(sk)
}

// sortValues sorts in place with Python ordering; the first comparison
// error wins.
func sortValues(items []any, key func(any) any, reverse bool) error {
	var err error
	sort.SliceStable(items, func(i, j int) bool {
		a, b := items[i], items[j]
		if key != nil {
			a, b = key(a), key(b)
		}
		if reverse {
			a, b = b, a
		}
		c, e := compare(a, b, "<")
		if e != nil && err == nil {
			err = e
		}
		return c < 0
	})
	return err
}

func dictViewLen(v any) int {
	if d, ok := v.(*dictView); ok {
		return len(d.items)
	}
	return 0
}
