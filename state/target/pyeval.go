package target

import (
	"errors"
	"fmt"
	"slices"
	"sort"
)

// Salt evaluates a compound target by joining Python source text and
// eval()ing it: the minion joins True/False/[] with and, or, not and
// parentheses (salt/matchers/compound_match.py), the master joins set
// literals with &, |, - and parentheses (CkMinions._check_compound_minions
// in salt/utils/minions.py). A malformed target is whatever Python makes
// of that text, which is not always an error: "( )" is an empty tuple,
// "x or y ( z )" calls y only if x is false, and "( a" on the master is
// closed for it. pyeval is the small part of Python's expression grammar
// and semantics those texts can reach, so that Brine answers as Salt
// does.

// pyKind is the kind of one Python token or value.
type pyKind uint8

const (
	pyTrue pyKind = iota
	pyFalse
	pyList  // [] — ipcidr_match.py's answer to an invalid IP/CIDR
	pyTuple // () — an empty pair of parentheses
	pySet   // str(set(minions)) on the master; set() when empty
	pyAnd
	pyOr
	pyNot
	pyLParen
	pyRParen
	pyBitAnd // &
	pyBitOr  // |
	pyMinus  // -
)

// pyTok is one word of the Python text Salt builds; for pySet, set holds
// the minion ids.
type pyTok struct {
	kind pyKind
	set  map[string]struct{}
}

// pyVal is a value during evaluation.
type pyVal = pyTok

func (v pyVal) truthy() bool {
	switch v.kind {
	case pyTrue:
		return true
	case pySet:
		return len(v.set) > 0
	}
	return false
}

func (v pyVal) typeName() string {
	switch v.kind {
	case pyTrue, pyFalse:
		return "bool"
	case pyList:
		return "list"
	case pyTuple:
		return "tuple"
	}
	return "set"
}

// pyNode is a parsed expression.
type pyNode struct {
	op   pyKind // pyAnd, pyOr, pyNot, pyBitAnd, pyBitOr, pyMinus; or a value kind for a leaf
	call bool   // x(...): Python raises TypeError, as no value here is callable
	tok  pyTok
	args []*pyNode
}

// errPySyntax is Python's SyntaxError from eval(); errPyType its
// TypeError at run time.
var (
	errPySyntax = errors.New("SyntaxError: invalid syntax")
	errPyType   = errors.New("TypeError")
)

type pyParser struct {
	toks []pyTok
	i    int
}

// parsePy parses the whole token stream as a Python expression, or
// fails as compile() does before anything is evaluated.
func parsePy(toks []pyTok) (*pyNode, error) {
	if len(toks) == 0 {
		return nil, fmt.Errorf("%w: empty expression", errPySyntax)
	}
	p := &pyParser{toks: toks}
	n, err := p.orTest()
	if err != nil {
		return nil, err
	}
	if p.i < len(p.toks) {
		return nil, fmt.Errorf("%w at word %d", errPySyntax, p.i+1)
	}
	return n, nil
}

func (p *pyParser) peek() (pyKind, bool) {
	if p.i >= len(p.toks) {
		return 0, false
	}
	return p.toks[p.i].kind, true
}

func (p *pyParser) accept(k pyKind) bool {
	if got, ok := p.peek(); ok && got == k {
		p.i++
		return true
	}
	return false
}

// binary parses operand (op operand)* for one precedence level.
func (p *pyParser) binary(op pyKind, operand func() (*pyNode, error)) (*pyNode, error) {
	n, err := operand()
	if err != nil {
		return nil, err
	}
	for p.accept(op) {
		r, err := operand()
		if err != nil {
			return nil, err
		}
		n = &pyNode{op: op, args: []*pyNode{n, r}}
	}
	return n, nil
}

func (p *pyParser) orTest() (*pyNode, error)  { return p.binary(pyOr, p.andTest) }
func (p *pyParser) andTest() (*pyNode, error) { return p.binary(pyAnd, p.notTest) }

func (p *pyParser) notTest() (*pyNode, error) {
	if p.accept(pyNot) {
		x, err := p.notTest()
		if err != nil {
			return nil, err
		}
		return &pyNode{op: pyNot, args: []*pyNode{x}}, nil
	}
	return p.bitOr()
}

func (p *pyParser) bitOr() (*pyNode, error)  { return p.binary(pyBitOr, p.bitAnd) }
func (p *pyParser) bitAnd() (*pyNode, error) { return p.binary(pyBitAnd, p.arith) }
func (p *pyParser) arith() (*pyNode, error)  { return p.binary(pyMinus, p.unary) }

func (p *pyParser) unary() (*pyNode, error) {
	if p.accept(pyMinus) {
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		return &pyNode{op: pyMinus, args: []*pyNode{x}}, nil
	}
	return p.primary()
}

// primary is an atom with call trailers. "[]" after a value would be a
// subscript with nothing in it, a SyntaxError.
func (p *pyParser) primary() (*pyNode, error) {
	n, err := p.atom()
	if err != nil {
		return nil, err
	}
	for {
		k, ok := p.peek()
		switch {
		case ok && k == pyLParen:
			p.i++
			call := &pyNode{call: true, args: []*pyNode{n}}
			if !p.accept(pyRParen) {
				arg, err := p.orTest()
				if err != nil {
					return nil, err
				}
				if !p.accept(pyRParen) {
					return nil, fmt.Errorf("%w at word %d", errPySyntax, p.i+1)
				}
				call.args = append(call.args, arg)
			}
			n = call
		case ok && k == pyList:
			return nil, fmt.Errorf("%w at word %d: subscript without an index", errPySyntax, p.i+1)
		default:
			return n, nil
		}
	}
}

func (p *pyParser) atom() (*pyNode, error) {
	k, ok := p.peek()
	if !ok {
		return nil, fmt.Errorf("%w: unexpected end of expression", errPySyntax)
	}
	switch k {
	case pyTrue, pyFalse, pyList, pySet:
		p.i++
		return &pyNode{op: k, tok: p.toks[p.i-1]}, nil
	case pyLParen:
		p.i++
		if p.accept(pyRParen) {
			return &pyNode{op: pyTuple, tok: pyTok{kind: pyTuple}}, nil
		}
		n, err := p.orTest()
		if err != nil {
			return nil, err
		}
		if !p.accept(pyRParen) {
			return nil, fmt.Errorf("%w at word %d: \"(\" was never closed", errPySyntax, p.i+1)
		}
		return n, nil
	}
	return nil, fmt.Errorf("%w at word %d", errPySyntax, p.i+1)
}

// eval evaluates n as Python does: and/or short-circuit and return an
// operand, set operators need sets on both sides.
func (n *pyNode) eval() (pyVal, error) {
	if n.call {
		f, err := n.args[0].eval()
		if err != nil {
			return pyVal{}, err
		}
		return pyVal{}, fmt.Errorf("%w: '%s' object is not callable", errPyType, f.typeName())
	}
	switch n.op {
	case pyAnd, pyOr:
		l, err := n.args[0].eval()
		if err != nil || l.truthy() == (n.op == pyOr) {
			return l, err
		}
		return n.args[1].eval()
	case pyNot:
		x, err := n.args[0].eval()
		if err != nil {
			return pyVal{}, err
		}
		if x.truthy() {
			return pyVal{kind: pyFalse}, nil
		}
		return pyVal{kind: pyTrue}, nil
	case pyBitAnd, pyBitOr, pyMinus:
		return n.setOp()
	}
	return n.tok, nil
}

// setOp is &, | and binary or unary -, defined here only on sets (the
// master's texts never put them between booleans).
func (n *pyNode) setOp() (pyVal, error) {
	vals := make([]pyVal, len(n.args))
	for i, a := range n.args {
		v, err := a.eval()
		if err != nil {
			return pyVal{}, err
		}
		if v.kind != pySet {
			return pyVal{}, fmt.Errorf("%w: unsupported operand type %s", errPyType, v.typeName())
		}
		vals[i] = v
	}
	if len(vals) == 1 {
		return pyVal{}, fmt.Errorf("%w: bad operand type for unary -: 'set'", errPyType)
	}
	out := map[string]struct{}{}
	a, b := vals[0].set, vals[1].set
	for id := range a {
		_, inB := b[id]
		if n.op == pyBitOr || (n.op == pyBitAnd) == inB {
			out[id] = struct{}{}
		}
	}
	if n.op == pyBitOr {
		for id := range b {
			out[id] = struct{}{}
		}
	}
	return pyVal{kind: pySet, set: out}, nil
}

// evalPy parses and evaluates toks as eval(" ".join(results)) does.
func evalPy(toks []pyTok) (pyVal, error) {
	n, err := parsePy(toks)
	if err != nil {
		return pyVal{}, err
	}
	return n.eval()
}

// sortedSet lists a set's ids in order.
func sortedSet(s map[string]struct{}) []string {
	out := make([]string, 0, len(s))
	for id := range s {
		out = append(out, id)
	}
	sort.Strings(out)
	return slices.Clip(out)
}
