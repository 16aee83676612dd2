package jinja

import (
	"math"
	"strconv"
)

// Expressions.

// parseTuple parses a comma-separated expression list; a single item
// without a trailing comma is returned bare.
func (p *parser) parseTuple(simplified, withCondexpr bool) (expr, error) {
	line := p.cur().line
	var items []expr
	trailing := false
	for {
		if len(items) > 0 {
			if !p.skipOp(",") {
				break
			}
			trailing = true
		}
		if p.atTupleEnd() {
			break
		}
		var e expr
		var err error
		if simplified {
			e, err = p.parseOr()
		} else {
			e, err = p.parseExpression(withCondexpr)
		}
		if err != nil {
			return nil, err
		}
		items = append(items, e)
		trailing = false
	}
	if len(items) == 0 {
		return nil, p.fail("Expected an expression, got '%s'", describe(p.cur()))
	}
	if len(items) == 1 && !trailing {
		return items[0], nil
	}
	return &tupleExpr{pos{line}, items}, nil
}

func (p *parser) atTupleEnd() bool {
	t := p.cur()
	switch t.kind {
	case tVarEnd, tBlockEnd, tEOF:
		return true
	case tOp:
		return t.val == ")" || t.val == "]" || t.val == "}"
	case tName:
		return t.val == "in" || t.val == "if" || t.val == "recursive"
	}
	return false
}

func (p *parser) parseExpression(withCondexpr bool) (expr, error) {
	if withCondexpr {
		return p.parseCondexpr()
	}
	return p.parseOr()
}

func (p *parser) parseCondexpr() (expr, error) {
	line := p.cur().line
	e, err := p.parseOr()
	if err != nil {
		return nil, err
	}
	for p.skipName("if") {
		cond, err := p.parseOr()
		if err != nil {
			return nil, err
		}
		var orelse expr
		if p.skipName("else") {
			if orelse, err = p.parseCondexpr(); err != nil {
				return nil, err
			}
		}
		e = &condExpr{pos{line}, cond, e, orelse}
	}
	return e, nil
}

// Jinja2's binary levels (jinja2/parser.py parse_or … parse_pow) are
// left-associative: next (op next)*.

func (p *parser) parseOr() (expr, error) { return p.leftAssoc(p.parseAnd, p.names("or")) }

func (p *parser) parseAnd() (expr, error) { return p.leftAssoc(p.parseNot, p.names("and")) }

func (p *parser) parseNot() (expr, error) {
	line := p.cur().line
	if p.skipName("not") {
		x, err := p.parseNot()
		if err != nil {
			return nil, err
		}
		return &unaryExpr{pos{line}, "not", x}, nil
	}
	return p.parseCompare()
}

func (p *parser) parseCompare() (expr, error) {
	line := p.cur().line
	first, err := p.parseMath1()
	if err != nil {
		return nil, err
	}
	c := &compareExpr{pos: pos{line}, first: first}
	for {
		t := p.cur()
		var op string
		switch {
		case t.kind == tOp && (t.val == "==" || t.val == "!=" || t.val == "<" || t.val == ">" || t.val == "<=" || t.val == ">="):
			op = t.val
			p.next()
		case p.isName("in"):
			op = "in"
			p.next()
		case p.isName("not") && p.peek().kind == tName && p.peek().val == "in":
			op = "notin"
			p.next()
			p.next()
		default:
			if len(c.ops) == 0 {
				return first, nil
			}
			return c, nil
		}
		r, err := p.parseMath1()
		if err != nil {
			return nil, err
		}
		c.ops = append(c.ops, op)
		c.rest = append(c.rest, r)
	}
}

func (p *parser) parseMath1() (expr, error) { return p.leftAssoc(p.parseConcat, p.ops("+", "-")) }

func (p *parser) parseConcat() (expr, error) {
	line := p.cur().line
	l, err := p.parseMath2()
	if err != nil {
		return nil, err
	}
	items := []expr{l}
	for p.skipOp("~") {
		r, err := p.parseMath2()
		if err != nil {
			return nil, err
		}
		items = append(items, r)
	}
	if len(items) == 1 {
		return l, nil
	}
	return &concatExpr{pos{line}, items}, nil
}

func (p *parser) parseMath2() (expr, error) {
	return p.leftAssoc(p.parsePow, p.ops("*", "/", "//", "%"))
}

func (p *parser) parsePow() (expr, error) {
	return p.leftAssoc(func() (expr, error) { return p.parseUnary(true) }, p.ops("**"))
}

// leftAssoc parses next (op next)* into left-nested binExprs, op being
// whatever match consumes.
func (p *parser) leftAssoc(next func() (expr, error), match func() (string, bool)) (expr, error) {
	line := p.cur().line
	l, err := next()
	if err != nil {
		return nil, err
	}
	for {
		op, ok := match()
		if !ok {
			return l, nil
		}
		r, err := next()
		if err != nil {
			return nil, err
		}
		l = &binExpr{pos{line}, op, l, r}
	}
}

// names matches and consumes the keyword operator name.
func (p *parser) names(name string) func() (string, bool) {
	return func() (string, bool) { return name, p.skipName(name) }
}

// ops matches and consumes one of the operator tokens.
func (p *parser) ops(ops ...string) func() (string, bool) {
	return func() (string, bool) {
		for _, op := range ops {
			if p.isOp(op) {
				return p.next().val, true
			}
		}
		return "", false
	}
}

func (p *parser) parseUnary(withFilter bool) (expr, error) {
	line := p.cur().line
	var e expr
	var err error
	switch {
	case p.isOp("-") || p.isOp("+"):
		op := p.next().val
		x, err := p.parseUnary(false)
		if err != nil {
			return nil, err
		}
		e = &unaryExpr{pos{line}, op, x}
	default:
		if e, err = p.parsePrimary(); err != nil {
			return nil, err
		}
	}
	if e, err = p.parsePostfix(e); err != nil {
		return nil, err
	}
	if withFilter {
		return p.parseFilterExpr(e)
	}
	return e, nil
}

func (p *parser) parsePrimary() (expr, error) {
	t := p.cur()
	line := t.line
	switch t.kind {
	case tName:
		p.next()
		switch t.val {
		case "true", "True":
			return &constExpr{pos{line}, true}, nil
		case "false", "False":
			return &constExpr{pos{line}, false}, nil
		case "none", "None":
			return &constExpr{pos{line}, nil}, nil
		}
		return &nameExpr{pos{line}, t.val}, nil
	case tString:
		p.next()
		s := t.val
		for p.cur().kind == tString {
			s += p.next().val
		}
		return &constExpr{pos{line}, s}, nil
	case tInt:
		p.next()
		v, err := strconv.ParseInt(t.val, 0, 64)
		if err != nil {
			return nil, syntaxErr(line, "invalid integer %s", t.val)
		}
		return &constExpr{pos{line}, int(v)}, nil
	case tFloat:
		p.next()
		v, err := strconv.ParseFloat(t.val, 64)
		if err != nil && !math.IsInf(v, 0) {
			return nil, syntaxErr(line, "invalid float %s", t.val)
		}
		return &constExpr{pos{line}, v}, nil
	case tOp:
		switch t.val {
		case "(":
			p.next()
			if p.skipOp(")") {
				return &tupleExpr{pos{line}, nil}, nil
			}
			e, err := p.parseTuple(false, true)
			if err != nil {
				return nil, err
			}
			return e, p.expectOp(")")
		case "[":
			return p.parseList()
		case "{":
			return p.parseDict()
		}
	}
	return nil, p.fail("unexpected '%s'", describe(t))
}

func (p *parser) parseList() (expr, error) {
	line := p.next().line
	l := &listExpr{pos: pos{line}}
	for !p.isOp("]") {
		if len(l.items) > 0 {
			if err := p.expectOp(","); err != nil {
				return nil, err
			}
			if p.isOp("]") {
				break
			}
		}
		e, err := p.parseExpression(true)
		if err != nil {
			return nil, err
		}
		l.items = append(l.items, e)
	}
	p.next()
	return l, nil
}

func (p *parser) parseDict() (expr, error) {
	line := p.next().line
	d := &dictExpr{pos: pos{line}}
	for !p.isOp("}") {
		if len(d.keys) > 0 {
			if err := p.expectOp(","); err != nil {
				return nil, err
			}
			if p.isOp("}") {
				break
			}
		}
		k, err := p.parseExpression(true)
		if err != nil {
			return nil, err
		}
		if err := p.expectOp(":"); err != nil {
			return nil, err
		}
		v, err := p.parseExpression(true)
		if err != nil {
			return nil, err
		}
		d.keys = append(d.keys, k)
		d.vals = append(d.vals, v)
	}
	p.next()
	return d, nil
}

func (p *parser) parsePostfix(e expr) (expr, error) {
	for {
		line := p.cur().line
		switch {
		case p.isOp("."):
			p.next()
			t := p.next()
			switch t.kind {
			case tName:
				e = &getattrExpr{pos{line}, e, t.val}
			case tInt:
				n, _ := strconv.Atoi(t.val)
				e = &getitemExpr{pos{line}, e, &constExpr{pos{line}, n}}
			default:
				return nil, syntaxErr(line, "expected name or number")
			}
		case p.isOp("["):
			p.next()
			k, err := p.parseSubscript()
			if err != nil {
				return nil, err
			}
			if err := p.expectOp("]"); err != nil {
				return nil, err
			}
			e = &getitemExpr{pos{line}, e, k}
		case p.isOp("("):
			c, err := p.parseCall(e)
			if err != nil {
				return nil, err
			}
			e = c
		default:
			return e, nil
		}
	}
}

func (p *parser) parseSubscript() (expr, error) {
	line := p.cur().line
	var parts [3]expr
	idx := 0
	isSlice := false
	for {
		if p.isOp(":") {
			p.next()
			isSlice = true
			idx++
			if idx > 2 {
				return nil, p.fail("invalid slice")
			}
			continue
		}
		if p.isOp("]") {
			break
		}
		e, err := p.parseExpression(true)
		if err != nil {
			return nil, err
		}
		if !isSlice && p.isOp(",") {
			items := []expr{e}
			for p.skipOp(",") {
				if p.isOp("]") {
					break
				}
				x, err := p.parseExpression(true)
				if err != nil {
					return nil, err
				}
				items = append(items, x)
			}
			return &tupleExpr{pos{line}, items}, nil
		}
		parts[idx] = e
		if !p.isOp(":") {
			break
		}
	}
	if !isSlice {
		if parts[0] == nil {
			return nil, p.fail("expected subscript")
		}
		return parts[0], nil
	}
	return &sliceExpr{pos{line}, parts[0], parts[1], parts[2]}, nil
}

// parseArgs reads "(args, k=v, *a, **kw)" into the provided slots.
func (p *parser) parseArgs() (args []expr, kwnames []string, kwvals []expr, star, dstar expr, err error) {
	if err = p.expectOp("("); err != nil {
		return
	}
	first := true
	bad := func(ok bool) error {
		if ok {
			return nil
		}
		return p.fail("invalid syntax for function call expression")
	}
	for !p.isOp(")") {
		if !first {
			if err = p.expectOp(","); err != nil {
				return
			}
			if p.isOp(")") {
				break
			}
		}
		first = false
		switch {
		case p.isOp("*"):
			if err = bad(star == nil && dstar == nil); err != nil {
				return
			}
			p.next()
			star, err = p.parseExpression(true)
		case p.isOp("**"):
			if err = bad(dstar == nil); err != nil {
				return
			}
			p.next()
			dstar, err = p.parseExpression(true)
		case p.cur().kind == tName && p.peek().kind == tOp && p.peek().val == "=":
			if err = bad(dstar == nil); err != nil {
				return
			}
			name := p.next().val
			p.next()
			var v expr
			v, err = p.parseExpression(true)
			kwnames = append(kwnames, name)
			kwvals = append(kwvals, v)
		default:
			if err = bad(star == nil && dstar == nil && len(kwnames) == 0); err != nil {
				return
			}
			var v expr
			v, err = p.parseExpression(true)
			args = append(args, v)
		}
		if err != nil {
			return
		}
	}
	p.next()
	return
}

func (p *parser) parseCall(fn expr) (expr, error) {
	line := p.cur().line
	args, kn, kv, star, dstar, err := p.parseArgs()
	if err != nil {
		return nil, err
	}
	return &callExpr{pos{line}, fn, args, kn, kv, star, dstar}, nil
}

func (p *parser) parseFilterCall(node expr) (*filterExpr, error) {
	line := p.cur().line
	name, err := p.identifier()
	if err != nil {
		return nil, err
	}
	for p.isOp(".") {
		p.next()
		part, err := p.identifier()
		if err != nil {
			return nil, err
		}
		name += "." + part
	}
	f := &filterExpr{pos: pos{line}, node: node, name: name}
	if p.isOp("(") {
		f.args, f.kwnames, f.kwvals, f.star, f.dstar, err = p.parseArgs()
		if err != nil {
			return nil, err
		}
	}
	return f, nil
}

func (p *parser) parseFilterExpr(e expr) (expr, error) {
	for {
		switch {
		case p.isOp("|"):
			p.next()
			f, err := p.parseFilterCall(e)
			if err != nil {
				return nil, err
			}
			e = f
		case p.isName("is"):
			t, err := p.parseTest(e)
			if err != nil {
				return nil, err
			}
			e = t
		case p.isOp("("):
			c, err := p.parseCall(e)
			if err != nil {
				return nil, err
			}
			e = c
		default:
			return e, nil
		}
	}
}

func (p *parser) parseTest(e expr) (expr, error) {
	line := p.next().line
	negate := p.skipName("not")
	name, err := p.identifier()
	if err != nil {
		return nil, err
	}
	for p.isOp(".") {
		p.next()
		part, err := p.identifier()
		if err != nil {
			return nil, err
		}
		name += "." + part
	}
	t := &testExpr{pos: pos{line}, node: e, name: name, negate: negate}
	cur := p.cur()
	switch {
	case p.isOp("("):
		args, _, _, _, _, err := p.parseArgs()
		if err != nil {
			return nil, err
		}
		t.args = args
	case (cur.kind == tName || cur.kind == tString || cur.kind == tInt || cur.kind == tFloat ||
		cur.kind == tOp && (cur.val == "[" || cur.val == "{")) &&
		!(cur.kind == tName && (cur.val == "else" || cur.val == "or" || cur.val == "and")):
		if cur.kind == tName && cur.val == "is" {
			return nil, p.fail("You cannot chain multiple tests with is")
		}
		arg, err := p.parsePrimary()
		if err != nil {
			return nil, err
		}
		if arg, err = p.parsePostfix(arg); err != nil {
			return nil, err
		}
		t.args = []expr{arg}
	}
	return t, nil
}
