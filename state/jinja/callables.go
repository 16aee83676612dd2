package jinja

import (
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
)

// macro is a {% macro %} (or a call block's caller) bound to the scope it
// was defined in.
type macro struct {
	def     *macroDef
	closure *frame
}

func (m *macro) call(r *runner, args []any, kw *ordered.Map) (any, error) {
	if r.depth++; r.depth > maxDepth {
		r.depth--
		return nil, runtimeErr("maximum recursion depth exceeded")
	}
	defer func() { r.depth-- }()
	d := m.def
	f := m.closure.child()
	f.inMacro = true
	kw = kw.Copy()
	if d.usesCaller && !contains(d.params, "caller") {
		if c, ok := kw.Get("caller"); ok && c != nil {
			f.vars["caller"] = c
		} else {
			f.vars["caller"] = &undefined{name: "caller", hint: "No caller defined"}
		}
		kw.Delete("caller")
	}
	firstDefault := len(d.params) - len(d.defaults)
	for i, p := range d.params {
		switch {
		case i < len(args):
			f.vars[p] = args[i]
		case kw.Has(p):
			f.vars[p] = kw.Value(p)
			kw.Delete(p)
		case i >= firstDefault:
			v, err := r.eval(d.defaults[i-firstDefault], f)
			if err != nil {
				return nil, err
			}
			f.vars[p] = v
		default:
			f.vars[p] = &undefined{name: p, hint: "parameter '" + p + "' was not provided"}
		}
	}
	if d.usesKwargs {
		f.vars["kwargs"] = kw
	} else if kw.Len() > 0 {
		if kw.Has("caller") {
			return nil, typeErr("macro '%s' was invoked with two values for the special caller argument. This is most likely a bug.", d.name)
		}
		return nil, typeErr("macro '%s' takes no keyword argument '%s'", d.name, pyStr(kw.Keys()[0]))
	}
	var extra []any
	if len(args) > len(d.params) {
		extra = args[len(d.params):]
	}
	if d.usesVarargs {
		f.vars["varargs"] = tuple(extra)
	} else if len(extra) > 0 {
		return nil, typeErr("macro '%s' takes not more than %d argument(s)", d.name, len(d.params))
	}
	var b strings.Builder
	if err := r.exec(d.body, f, &b); err != nil {
		return nil, err
	}
	return b.String(), nil
}

// loopObj is the "loop" variable of a for loop.
type loopObj struct {
	items   []any
	index0  int
	depth0  int
	recurse func(any) (string, error)
	last    any
	hasLast bool
}

func (l *loopObj) attr(name string) (any, bool) {
	n := len(l.items)
	switch name {
	case "index":
		return l.index0 + 1, true
	case "index0":
		return l.index0, true
	case "revindex":
		return n - l.index0, true
	case "revindex0":
		return n - l.index0 - 1, true
	case "first":
		return l.index0 == 0, true
	case "last":
		return l.index0 == n-1, true
	case "length":
		return n, true
	case "depth":
		return l.depth0 + 1, true
	case "depth0":
		return l.depth0, true
	case "previtem":
		if l.index0 == 0 {
			return &undefined{hint: "there is no previous item"}, true
		}
		return l.items[l.index0-1], true
	case "nextitem":
		if l.index0 >= n-1 {
			return &undefined{hint: "there is no next item"}, true
		}
		return l.items[l.index0+1], true
	case "cycle", "changed":
		return &boundMethod{recv: l, name: name}, true
	}
	return nil, false
}

func (l *loopObj) call(r *runner, args []any, _ *ordered.Map) (any, error) {
	if l.recurse == nil {
		return nil, typeErr("The loop must be marked as recursive to be called")
	}
	if len(args) != 1 {
		return nil, typeErr("loop() takes exactly one argument")
	}
	return l.recurse(args[0])
}

// boundMethod is a Python method looked up on a value (d.items, s.split).
type boundMethod struct {
	recv any
	name string
}

func (b *boundMethod) call(r *runner, args []any, kw *ordered.Map) (any, error) {
	return r.callMethod(b.recv, b.name, args, kw)
}

// builtinFunc is a global function such as range() or namespace().
type builtinFunc struct {
	name string
	fn   func(r *runner, args []any, kw *ordered.Map) (any, error)
}

func (b *builtinFunc) call(r *runner, args []any, kw *ordered.Map) (any, error) {
	return b.fn(r, args, kw)
}

// module is an imported template: its exported names and its output.
type module struct {
	name    string
	exports *ordered.Map
	output  string
}

// attribute returns the Python attribute attr of obj: a method of its
// type, or a field of a namespace, loop or module.
func (r *runner) attribute(obj any, attr string) (any, bool) {
	switch o := obj.(type) {
	case *namespace:
		return o.attrs.Get(attr)
	case *loopObj:
		return o.attr(attr)
	case *module:
		return o.exports.Get(attr)
	case *saltProxy:
		return o.lookup(r, attr)
	case *namedTuple:
		return o.field(attr)
	case *cyclerObj:
		if attr == "current" {
			return o.items[o.pos], true
		}
	}
	if hasMethod(obj, attr) {
		return &boundMethod{recv: obj, name: attr}, true
	}
	return nil, false
}
