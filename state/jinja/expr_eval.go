package jinja

import (
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
)

// eval evaluates an expression. Each family of expressions has its own
// method below; this is only the dispatch.
func (r *runner) eval(e expr, f *frame) (any, error) {
	switch e := e.(type) {
	case *constExpr:
		return e.val, nil
	case *nameExpr:
		return r.resolve(f, e.name), nil
	case *listExpr:
		out, err := r.evalItems(e.items, f)
		if err != nil {
			return nil, err
		}
		return newList(out), nil
	case *tupleExpr:
		out, err := r.evalItems(e.items, f)
		if err != nil {
			return nil, err
		}
		return tuple(out), nil
	case *dictExpr:
		return r.evalDict(e, f)
	case *getattrExpr:
		obj, err := r.eval(e.obj, f)
		if err != nil {
			return nil, err
		}
		return r.getattr(obj, e.attr)
	case *getitemExpr:
		return r.evalGetitem(e, f)
	case *callExpr:
		return r.evalCall(e, f)
	case *filterExpr:
		v, err := r.eval(e.node, f)
		if err != nil {
			return nil, err
		}
		return r.applyFilter(e, v, f)
	case *testExpr:
		return r.applyTest(e, f)
	case *binExpr:
		return r.evalBin(e, f)
	case *unaryExpr:
		return r.evalUnary(e, f)
	case *compareExpr:
		return r.evalCompare(e, f)
	case *condExpr:
		return r.evalCond(e, f)
	case *concatExpr:
		return r.evalConcat(e, f)
	case *sliceExpr:
		return nil, templateErr("unexpected slice")
	}
	return nil, runtimeErr("cannot evaluate %T", e)
}

// evalItems evaluates the items of a list or tuple display in order.
func (r *runner) evalItems(items []expr, f *frame) ([]any, error) {
	out := make([]any, 0, len(items))
	for _, it := range items {
		v, err := r.eval(it, f)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// evalDict evaluates a dict display, key then value, refusing keys Python
// could not hash.
func (r *runner) evalDict(e *dictExpr, f *frame) (any, error) {
	m := ordered.New()
	for i, k := range e.keys {
		kv, err := r.eval(k, f)
		if err != nil {
			return nil, err
		}
		if !hashable(kv) {
			if u, ok := kv.(*undefined); ok && r.strictFor(u) {
				return nil, u.err()
			}
			return nil, typeErr("unhashable type: '%s'", typeName(kv))
		}
		vv, err := r.eval(e.vals[i], f)
		if err != nil {
			return nil, err
		}
		setKey(m, kv, vv)
	}
	return m, nil
}

// evalGetitem evaluates obj[key] and obj[start:stop:step].
func (r *runner) evalGetitem(e *getitemExpr, f *frame) (any, error) {
	obj, err := r.eval(e.obj, f)
	if err != nil {
		return nil, err
	}
	if s, ok := e.key.(*sliceExpr); ok {
		return r.slice(obj, s, f)
	}
	k, err := r.eval(e.key, f)
	if err != nil {
		return nil, err
	}
	return r.getitem(obj, k)
}

// evalCall evaluates the callee, then its arguments, then calls it.
func (r *runner) evalCall(e *callExpr, f *frame) (any, error) {
	fn, err := r.eval(e.fn, f)
	if err != nil {
		return nil, err
	}
	args, kw, err := r.evalArgs(e.args, e.kwnames, e.kwvals, e.star, e.dstar, f)
	if err != nil {
		return nil, err
	}
	return r.callValue(fn, args, kw)
}

// evalUnary evaluates not, unary minus and unary plus.
func (r *runner) evalUnary(e *unaryExpr, f *frame) (any, error) {
	x, err := r.eval(e.x, f)
	if err != nil {
		return nil, err
	}
	switch e.op {
	case "not":
		b, err := r.truthy(x)
		return !b, err
	case "-":
		return r.neg(x)
	case "+":
		if _, ok := numeric(x); ok {
			return r.arith("+", 0, x)
		}
		return nil, typeErr("bad operand type for unary +: '%s'", typeName(x))
	}
	return nil, runtimeErr("cannot evaluate %T", e)
}

// evalCond evaluates an inline if-expression. With no else and a false
// condition the value is Jinja's lenient undefined with its hint.
func (r *runner) evalCond(e *condExpr, f *frame) (any, error) {
	c, err := r.eval(e.cond, f)
	if err != nil {
		return nil, err
	}
	ok, err := r.truthy(c)
	if err != nil {
		return nil, err
	}
	if ok {
		return r.eval(e.then, f)
	}
	if e.orelse == nil {
		return &undefined{lenient: true, hint: "the inline if-expression on line " + itoa(e.line) + " evaluated to false and no else section was defined."}, nil
	}
	return r.eval(e.orelse, f)
}

// evalConcat evaluates the ~ operator. Jinja evaluates every operand
// before converting any to str.
func (r *runner) evalConcat(e *concatExpr, f *frame) (any, error) {
	vals, err := r.evalItems(e.items, f)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	for _, v := range vals {
		s, err := r.toStr(v)
		if err != nil {
			return nil, err
		}
		b.WriteString(s)
	}
	return b.String(), nil
}

// setKey stores into a dict using Python's key folding (1 and 1.0 and
// True are one key; the first spelling is kept).
func setKey(m *ordered.Map, k, v any) {
	if sk, ok := storedKey(m, k); ok {
		k = sk
	}
	m.Set(k, v)
}

func (r *runner) evalBin(e *binExpr, f *frame) (any, error) {
	l, err := r.eval(e.l, f)
	if err != nil {
		return nil, err
	}
	switch e.op {
	case "and", "or":
		ok, err := r.truthy(l)
		if err != nil {
			return nil, err
		}
		if ok == (e.op == "or") {
			return l, nil
		}
		return r.eval(e.r, f)
	}
	rv, err := r.eval(e.r, f)
	if err != nil {
		return nil, err
	}
	return r.arith(e.op, l, rv)
}

func (r *runner) evalCompare(e *compareExpr, f *frame) (any, error) {
	l, err := r.eval(e.first, f)
	if err != nil {
		return nil, err
	}
	for i, op := range e.ops {
		rv, err := r.eval(e.rest[i], f)
		if err != nil {
			return nil, err
		}
		ok, err := r.compareOp(op, l, rv)
		if err != nil {
			return nil, err
		}
		if !ok {
			return false, nil
		}
		l = rv
	}
	return true, nil
}

func (r *runner) compareOp(op string, l, rv any) (bool, error) {
	// For "in" the container decides what an undefined item means
	// (str.__contains__ raises TypeError without touching it).
	if u, ok := l.(*undefined); ok && r.strictFor(u) && op != "in" && op != "notin" {
		return false, u.err()
	}
	if u, ok := rv.(*undefined); ok && r.strictFor(u) {
		return false, u.err()
	}
	switch op {
	case "==":
		return equal(l, rv), nil
	case "!=":
		return !equal(l, rv), nil
	case "in":
		return r.contains(rv, l)
	case "notin":
		ok, err := r.contains(rv, l)
		return !ok, err
	}
	c, err := compare(l, rv, op)
	if err != nil {
		return false, err
	}
	switch op {
	case "<":
		return c < 0, nil
	case "<=":
		return c <= 0, nil
	case ">":
		return c > 0, nil
	}
	return c >= 0, nil
}

// getattr is jinja2's Environment.getattr: a Python attribute (here: a
// method of the value's type) first, then an item of the same name.
func (r *runner) getattr(obj any, attr string) (any, error) {
	if u, ok := obj.(*undefined); ok {
		return nil, u.err()
	}
	if strings.HasPrefix(attr, "_") {
		return &undefined{obj: obj, hasObj: true, name: attr}, nil
	}
	if v, ok := r.attribute(obj, attr); ok {
		return v, nil
	}
	if v, ok := r.item(obj, attr); ok {
		return v, nil
	}
	return &undefined{obj: obj, hasObj: true, name: attr}, nil
}

// getitem is jinja2's Environment.getitem: obj[key], then an attribute
// when key is a string.
func (r *runner) getitem(obj, key any) (any, error) {
	if u, ok := obj.(*undefined); ok {
		return nil, u.err()
	}
	if _, ok := obj.(*ordered.Map); ok && !hashable(key) && !hashableTuple(key) {
		if u, ok := key.(*undefined); ok && r.strictFor(u) {
			return nil, u.err()
		}
		return nil, typeErr("unhashable type: '%s'", typeName(key))
	}
	if v, ok := r.item(obj, key); ok {
		return v, nil
	}
	if s, ok := key.(string); ok {
		if !strings.HasPrefix(s, "_") {
			if v, ok := r.attribute(obj, s); ok {
				return v, nil
			}
		}
		return &undefined{obj: obj, hasObj: true, name: s}, nil
	}
	return &undefined{obj: obj, hasObj: true, intKey: true, key: key}, nil
}

// item is obj[key] without fallbacks.
func (r *runner) item(obj, key any) (any, bool) {
	obj = plainTuple(obj)
	switch o := obj.(type) {
	case *ordered.Map:
		return lookupKey(o, key)
	case *pyList, tuple, string:
		i, ok := asInt(key)
		if !ok {
			return nil, false
		}
		if s, isStr := o.(string); isStr {
			rs := []rune(s)
			if i < 0 {
				i += len(rs)
			}
			if i < 0 || i >= len(rs) {
				return nil, false
			}
			return string(rs[i]), true
		}
		items, _ := seqItems(o)
		if i < 0 {
			i += len(items)
		}
		if i < 0 || i >= len(items) {
			return nil, false
		}
		return items[i], true
	case *namespace:
		if s, ok := key.(string); ok {
			return o.attrs.Get(s)
		}
	case *module:
		if s, ok := key.(string); ok {
			return o.exports.Get(s)
		}
	case *loopObj:
		if s, ok := key.(string); ok {
			return o.attr(s)
		}
	case *saltProxy:
		if s, ok := key.(string); ok {
			return o.lookup(r, s)
		}
	}
	return nil, false
}

func (r *runner) slice(obj any, s *sliceExpr, f *frame) (any, error) {
	var bounds [3]*int
	for i, e := range []expr{s.start, s.stop, s.step} {
		if e == nil {
			continue
		}
		v, err := r.eval(e, f)
		if err != nil {
			return nil, err
		}
		if v == nil {
			continue
		}
		n, ok := asInt(v)
		if !ok {
			return nil, typeErr("slice indices must be integers or None or have an __index__ method")
		}
		bounds[i] = &n
	}
	return sliceValue(obj, bounds[0], bounds[1], bounds[2])
}

// sliceValue implements Python slicing on lists, tuples and strings.
func sliceValue(obj any, start, stop, stepp *int) (any, error) {
	var items []any
	var str []rune
	isStr := false
	switch o := obj.(type) {
	case string:
		str = []rune(o)
		isStr = true
		items = make([]any, len(str))
	case *pyList:
		items = o.items
	case tuple:
		items = o
	case *undefined:
		return nil, o.err()
	case *ordered.Map:
		return nil, typeErr("unhashable type: 'slice'")
	default:
		// Jinja compiles slices to plain Python subscription, bypassing
		// the environment's getitem, so the TypeError surfaces.
		return nil, typeErr("'%s' object is not subscriptable", typeName(obj))
	}
	n := len(items)
	step := 1
	if stepp != nil {
		step = *stepp
	}
	if step == 0 {
		return nil, runtimeErr("slice step cannot be zero")
	}
	norm := func(p *int, def int, lo, hi int) int {
		if p == nil {
			return def
		}
		i := *p
		if i < 0 {
			i += n
			if i < lo {
				i = lo
			}
		} else if i > hi {
			i = hi
		}
		return i
	}
	var idx []int
	if step > 0 {
		b, e := norm(start, 0, 0, n), norm(stop, n, 0, n)
		for i := b; i < e; i += step {
			idx = append(idx, i)
		}
	} else {
		b, e := norm(start, n-1, -1, n-1), norm(stop, -1, -1, n-1)
		for i := b; i > e; i += step {
			idx = append(idx, i)
		}
	}
	if isStr {
		var sb strings.Builder
		for _, i := range idx {
			sb.WriteRune(str[i])
		}
		return sb.String(), nil
	}
	out := make([]any, 0, len(idx))
	for _, i := range idx {
		out = append(out, items[i])
	}
	if _, ok := obj.(tuple); ok {
		return tuple(out), nil
	}
	return newList(out), nil
}
