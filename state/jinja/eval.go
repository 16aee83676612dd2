package jinja

import (
	"context"
	"errors"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
)

// maxDepth bounds macro recursion and nested includes, so a template that
// recurses forever fails instead of exhausting the stack.
const maxDepth = 200

var (
	errBreak    = errors.New("break")
	errContinue = errors.New("continue")
)

// template is a parsed template source.
type template struct {
	name string
	src  string
	body []node
	// module caches the result of importing the template without
	// context, which Jinja evaluates once per environment.
	module *module
}

// runner holds one Render call's state.
type runner struct {
	ctx     context.Context
	opts    *Options
	strict  bool
	lexOpts lexOptions
	globals map[string]any
	cache   map[string]*template
	depth   int
	top     *template
}

// frame is one variable scope. Lookups walk the parent chain; assignments
// go into the innermost frame, which is how Jinja's {% set %} inside a
// for loop stays local to the loop body.
type frame struct {
	vars   map[string]any
	parent *frame
	tpl    *template
	// inMacro marks frames of macro bodies: errors there take the line of
	// the call site, as Salt reports the last top-level template frame.
	inMacro bool
	// blocks holds the block overrides of a child template ({% extends %}).
	blocks map[string][]*blockNode
}

func (f *frame) child() *frame {
	return &frame{vars: map[string]any{}, parent: f, tpl: f.tpl, inMacro: f.inMacro, blocks: f.blocks}
}

func (f *frame) lookup(name string) (any, bool) {
	for x := f; x != nil; x = x.parent {
		if v, ok := x.vars[name]; ok {
			return v, true
		}
	}
	return nil, false
}

func (r *runner) resolve(f *frame, name string) any {
	if v, ok := f.lookup(name); ok {
		return v
	}
	if v, ok := r.globals[name]; ok {
		return v
	}
	if v, ok := builtinGlobals[name]; ok {
		return v
	}
	return &undefined{name: name}
}

// annotate attaches the position of n to err unless it happened inside a
// macro body (the call site will attach its own line).
func annotate(err error, f *frame, line int) error {
	if err == nil || err == errBreak || err == errContinue {
		return err
	}
	var te *tplError
	if !errors.As(err, &te) {
		te = &tplError{kind: kindRuntime, msg: err.Error(), err: err}
		err = te
	}
	if te.line == 0 {
		te.line = line
		te.name = f.tpl.name
		te.src = f.tpl.src
	}
	return err
}

func (r *runner) exec(body []node, f *frame, w *strings.Builder) error {
	for _, n := range body {
		if err := r.ctx.Err(); err != nil {
			return err
		}
		if err := r.execNode(n, f, w); err != nil {
			return annotate(err, f, n.nodeLine())
		}
	}
	return nil
}

func (r *runner) execNode(n node, f *frame, w *strings.Builder) error {
	switch n := n.(type) {
	case *dataNode:
		w.WriteString(n.text)
	case *outputNode:
		v, err := r.eval(n.expr, f)
		if err != nil {
			return err
		}
		s, err := r.toStr(v)
		if err != nil {
			return err
		}
		w.WriteString(s)
	case *ifNode:
		for i, c := range n.conds {
			v, err := r.eval(c, f)
			if err == nil {
				var ok bool
				ok, err = r.truthy(v)
				v = ok
			}
			if err != nil {
				return annotate(err, f, n.condLines[i])
			}
			ok := v.(bool)
			if ok {
				return r.exec(n.bodies[i], f, w)
			}
		}
		return r.exec(n.orelse, f, w)
	case *forNode:
		return r.execFor(n, f, w)
	case *setNode:
		v, err := r.eval(n.value, f)
		if err != nil {
			return err
		}
		return r.assign(n.target, v, f)
	case *setBlockNode:
		var b strings.Builder
		if err := r.exec(n.body, f.child(), &b); err != nil {
			return err
		}
		var v any = b.String()
		for _, fl := range n.filters {
			var err error
			if v, err = r.applyFilter(fl, v, f); err != nil {
				return err
			}
		}
		return r.assign(n.target, v, f)
	case *macroNode:
		f.vars[n.name] = &macro{def: n.m, closure: f}
	case *callBlockNode:
		return r.execCallBlock(n, f, w)
	case *filterBlockNode:
		var b strings.Builder
		if err := r.exec(n.body, f.child(), &b); err != nil {
			return err
		}
		var v any = b.String()
		for _, fl := range n.filters {
			var err error
			if v, err = r.applyFilter(fl, v, f); err != nil {
				return err
			}
		}
		s, err := r.toStr(v)
		if err != nil {
			return err
		}
		w.WriteString(s)
	case *doNode:
		_, err := r.eval(n.expr, f)
		return err
	case *breakNode:
		return errBreak
	case *continueNode:
		return errContinue
	case *includeNode:
		return r.execInclude(n, f, w)
	case *importNode:
		return r.execImport(n, f)
	case *fromImportNode:
		return r.execFromImport(n, f)
	case *withNode:
		inner := f.child()
		for i, t := range n.targets {
			v, err := r.eval(n.values[i], f)
			if err != nil {
				return err
			}
			if err := r.assign(t, v, inner); err != nil {
				return err
			}
		}
		return r.exec(n.body, inner, w)
	case *loadNode:
		var b strings.Builder
		if err := r.exec(n.body, f.child(), &b); err != nil {
			return err
		}
		v, err := r.loadFormat(n.format, b.String())
		if err != nil {
			return err
		}
		return r.assign(n.target, v, f)
	case *scopeNode:
		return r.exec(n.body, f, w)
	case *blockNode:
		return r.execBlock(n, f, w)
	case *extendsNode:
		return templateErr("extends must be the first tag of a template")
	}
	return nil
}

// assign binds v to a set/for target: a name, a tuple of names to unpack
// into, or a namespace attribute.
func (r *runner) assign(target expr, v any, f *frame) error {
	switch t := target.(type) {
	case *nameExpr:
		f.vars[t.name] = v
		return nil
	case *tupleExpr:
		items, err := r.iterate(v)
		if err != nil {
			return typeErr("cannot unpack non-iterable %s object", typeName(v))
		}
		if len(items) != len(t.items) {
			if len(items) > len(t.items) {
				return runtimeErr("too many values to unpack (expected %d)", len(t.items))
			}
			return runtimeErr("not enough values to unpack (expected %d, got %d)", len(t.items), len(items))
		}
		for i, it := range t.items {
			if err := r.assign(it, items[i], f); err != nil {
				return err
			}
		}
		return nil
	case *getattrExpr:
		obj, err := r.eval(t.obj, f)
		if err != nil {
			return err
		}
		ns, ok := obj.(*namespace)
		if !ok {
			return templateErr("cannot assign attribute on non-namespace object")
		}
		ns.attrs.Set(t.attr, v)
		return nil
	}
	return templateErr("cannot assign to expression")
}

func (r *runner) execFor(n *forNode, f *frame, w *strings.Builder) error {
	seqv, err := r.eval(n.iter, f)
	if err != nil {
		return err
	}
	return r.loop(n, seqv, f, w, 0)
}

func (r *runner) loop(n *forNode, seqv any, f *frame, w *strings.Builder, depth int) error {
	items, err := r.iterate(seqv)
	if err != nil {
		return err
	}
	if n.filter != nil {
		var kept []any
		for _, it := range items {
			inner := f.child()
			if err := r.assign(n.target, it, inner); err != nil {
				return err
			}
			v, err := r.eval(n.filter, inner)
			if err != nil {
				return err
			}
			ok, err := r.truthy(v)
			if err != nil {
				return err
			}
			if ok {
				kept = append(kept, it)
			}
		}
		items = kept
	}
	if len(items) == 0 {
		return r.exec(n.orelse, f, w)
	}
	lo := &loopObj{items: items, depth0: depth}
	if n.recursive {
		lo.recurse = func(v any) (string, error) {
			if r.depth++; r.depth > maxDepth {
				return "", runtimeErr("maximum recursion depth exceeded")
			}
			defer func() { r.depth-- }()
			var b strings.Builder
			err := r.loop(n, v, f, &b, depth+1)
			return b.String(), err
		}
	}
	for i, it := range items {
		lo.index0 = i
		inner := f.child()
		inner.vars["loop"] = lo
		if err := r.assign(n.target, it, inner); err != nil {
			return err
		}
		err := r.exec(n.body, inner, w)
		if err == errBreak {
			break
		}
		if err != nil && err != errContinue {
			return err
		}
	}
	return nil
}

func (r *runner) execCallBlock(n *callBlockNode, f *frame, w *strings.Builder) error {
	caller := &macro{def: n.caller, closure: f}
	c := n.call
	fn, err := r.eval(c.fn, f)
	if err != nil {
		return err
	}
	args, kw, err := r.evalArgs(c.args, c.kwnames, c.kwvals, c.star, c.dstar, f)
	if err != nil {
		return err
	}
	kw.Set("caller", caller)
	v, err := r.callValue(fn, args, kw)
	if err != nil {
		return err
	}
	s, err := r.toStr(v)
	if err != nil {
		return err
	}
	w.WriteString(s)
	return nil
}

// evalArgs evaluates call arguments into positional values and an
// ordered keyword map.
func (r *runner) evalArgs(argExprs []expr, kwnames []string, kwvals []expr, star, dstar expr, f *frame) ([]any, *ordered.Map, error) {
	args := make([]any, 0, len(argExprs))
	for _, a := range argExprs {
		v, err := r.eval(a, f)
		if err != nil {
			return nil, nil, err
		}
		args = append(args, v)
	}
	if star != nil {
		v, err := r.eval(star, f)
		if err != nil {
			return nil, nil, err
		}
		items, err := r.iterate(v)
		if err != nil {
			return nil, nil, err
		}
		args = append(args, items...)
	}
	kw := ordered.New()
	for i, name := range kwnames {
		v, err := r.eval(kwvals[i], f)
		if err != nil {
			return nil, nil, err
		}
		kw.Set(name, v)
	}
	if dstar != nil {
		v, err := r.eval(dstar, f)
		if err != nil {
			return nil, nil, err
		}
		m, ok := v.(*ordered.Map)
		if !ok {
			return nil, nil, typeErr("argument after ** must be a mapping, not %s", typeName(v))
		}
		m.Range(func(k, val any) bool { kw.Set(k, val); return true })
	}
	return args, kw, nil
}

func (r *runner) callValue(fn any, args []any, kw *ordered.Map) (any, error) {
	switch c := fn.(type) {
	case callable:
		if err := r.ctx.Err(); err != nil {
			return nil, err
		}
		return c.call(r, args, kw)
	case *undefined:
		return nil, c.err()
	}
	return nil, typeErr("'%s' object is not callable", typeName(fn))
}
