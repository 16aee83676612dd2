package jinja

import (
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
)

// Template inheritance ({% extends %} / {% block %}); rare in Salt trees
// but cheap to support.

func firstExtends(body []node) (*extendsNode, bool) {
	for _, n := range body {
		if e, ok := n.(*extendsNode); ok {
			return e, true
		}
	}
	return nil, false
}

// collectBlocks lists every block defined in body, nested ones included.
func collectBlocks(body []node, into map[string]*blockNode) {
	for _, n := range body {
		switch n := n.(type) {
		case *blockNode:
			if _, ok := into[n.name]; !ok {
				into[n.name] = n
			}
			collectBlocks(n.body, into)
		case *ifNode:
			for _, b := range n.bodies {
				collectBlocks(b, into)
			}
			collectBlocks(n.orelse, into)
		case *forNode:
			collectBlocks(n.body, into)
		}
	}
}

func (r *runner) renderExtends(tpl *template, ext *extendsNode, f *frame) (string, error) {
	// Top-level statements of the child run for their side effects
	// (set, import, macro); its output outside blocks is discarded.
	var discard strings.Builder
	for _, n := range tpl.body {
		if _, isBlock := n.(*blockNode); isBlock {
			continue
		}
		if n == node(ext) {
			break
		}
		if err := r.execNode(n, f, &discard); err != nil {
			return "", annotate(err, f, n.nodeLine())
		}
	}
	nameVal, err := r.eval(ext.template, f)
	if err != nil {
		return "", annotate(err, f, ext.line)
	}
	parent, err := r.load(nameVal)
	if err != nil {
		return "", annotate(err, f, ext.line)
	}
	own := map[string]*blockNode{}
	collectBlocks(tpl.body, own)
	blocks := map[string][]*blockNode{}
	for name, chain := range f.blocks {
		blocks[name] = chain
	}
	for name, b := range own {
		blocks[name] = append(blocks[name], b)
	}
	if r.depth++; r.depth > maxDepth {
		r.depth--
		return "", runtimeErr("maximum recursion depth exceeded")
	}
	defer func() { r.depth-- }()
	pf := &frame{vars: map[string]any{}, parent: f, tpl: parent, blocks: blocks}
	return r.renderTemplate(parent, pf)
}

// execBlock renders the most derived override of a block; super()
// renders the next one up the chain.
func (r *runner) execBlock(n *blockNode, f *frame, w *strings.Builder) error {
	chain := append(append([]*blockNode{}, f.blocks[n.name]...), n)
	return r.renderBlockChain(chain, f, w)
}

func (r *runner) renderBlockChain(chain []*blockNode, f *frame, w *strings.Builder) error {
	inner := f.child()
	if len(chain) > 1 {
		rest := chain[1:]
		inner.vars["super"] = &builtinFunc{name: "super", fn: func(r *runner, _ []any, _ *ordered.Map) (any, error) {
			var b strings.Builder
			err := r.renderBlockChain(rest, f, &b)
			return b.String(), err
		}}
	}
	return r.exec(chain[0].body, inner, w)
}
