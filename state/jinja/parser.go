package jinja

import (
	"fmt"
	"strings"
)

// parser is a recursive-descent parser following jinja2/parser.py's
// grammar and precedence.
type parser struct {
	toks []token
	i    int
	// blockStack holds the names of open block tags and endStack the end
	// tags being looked for, for Jinja's error messages.
	blockStack []string
	endStack   [][]string
	loopDepth  int
}

func parse(src string, opts lexOptions) ([]node, error) {
	toks, err := lex(src, opts)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	body, err := p.subparse(nil)
	if err != nil {
		return nil, err
	}
	if err := checkNames(body); err != nil {
		return nil, err
	}
	return body, nil
}

func (p *parser) cur() token  { return p.toks[p.i] }
func (p *parser) prev() token { return p.toks[max(p.i-1, 0)] }
func (p *parser) peek() token { return p.toks[min(p.i+1, len(p.toks)-1)] }
func (p *parser) next() token {
	t := p.toks[p.i]
	if p.i < len(p.toks)-1 {
		p.i++
	}
	return t
}

func (p *parser) isOp(v string) bool   { t := p.cur(); return t.kind == tOp && t.val == v }
func (p *parser) isName(v string) bool { t := p.cur(); return t.kind == tName && t.val == v }

func (p *parser) skipOp(v string) bool {
	if p.isOp(v) {
		p.next()
		return true
	}
	return false
}

func (p *parser) skipName(v string) bool {
	if p.isName(v) {
		p.next()
		return true
	}
	return false
}

func describe(t token) string {
	switch t.kind {
	case tEOF:
		return "end of template"
	case tVarEnd:
		return "end of print statement"
	case tBlockEnd:
		return "end of statement block"
	case tVarBegin:
		return "begin of print statement"
	case tBlockBegin:
		return "begin of statement block"
	case tString:
		return "string"
	case tInt:
		return "integer"
	case tFloat:
		return "float"
	case tData:
		return "template data / text"
	}
	return t.val
}

func (p *parser) fail(format string, args ...any) error {
	return syntaxErr(p.cur().line, format, args...)
}

func (p *parser) expectOp(v string) error {
	if !p.skipOp(v) {
		return p.fail("expected token '%s', got '%s'", v, describe(p.cur()))
	}
	return nil
}

func (p *parser) expectName(v string) error {
	if !p.skipName(v) {
		return p.fail("expected token '%s', got '%s'", v, describe(p.cur()))
	}
	return nil
}

func (p *parser) expectBlockEnd() error {
	if p.cur().kind != tBlockEnd {
		return p.fail("expected token 'end of statement block', got '%s'", describe(p.cur()))
	}
	p.next()
	return nil
}

func (p *parser) identifier() (string, error) {
	t := p.cur()
	if t.kind != tName {
		return "", p.fail("expected token 'name', got '%s'", describe(t))
	}
	p.next()
	return t.val, nil
}

// subparse reads nodes until a block tag whose name is in ends; it leaves
// the parser on that tag's name token.
func (p *parser) subparse(ends []string) ([]node, error) {
	if ends != nil {
		p.endStack = append(p.endStack, ends)
		defer func() { p.endStack = p.endStack[:len(p.endStack)-1] }()
	}
	var body []node
	for {
		t := p.cur()
		switch t.kind {
		case tEOF:
			if ends != nil {
				return nil, p.unexpectedEnd(ends)
			}
			return body, nil
		case tData:
			p.next()
			body = append(body, &dataNode{pos{t.line}, t.val})
		case tVarBegin:
			p.next()
			e, err := p.parseTuple(false, true)
			if err != nil {
				return nil, err
			}
			if p.cur().kind != tVarEnd {
				return nil, p.fail("expected token 'end of print statement', got '%s'", describe(p.cur()))
			}
			p.next()
			body = append(body, &outputNode{pos{t.line}, e})
		case tBlockBegin:
			p.next()
			nt := p.cur()
			if nt.kind == tName && contains(ends, nt.val) {
				return body, nil
			}
			n, err := p.statement()
			if err != nil {
				return nil, err
			}
			if n != nil {
				body = append(body, n)
			}
		default:
			return nil, p.fail("unexpected '%s'", describe(t))
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (p *parser) unexpectedEnd(_ []string) error {
	return p.failUnknown("", p.cur().line)
}

// failUnknown builds jinja2's _fail_ut_eof message for an unknown tag
// (name) or the end of the template (name == "").
func (p *parser) failUnknown(name string, line int) error {
	msg := "Unexpected end of template."
	if name != "" {
		msg = fmt.Sprintf("Encountered unknown tag '%s'.", name)
	}
	if n := len(p.endStack); n > 0 {
		quoted := make([]string, len(p.endStack[n-1]))
		for i, e := range p.endStack[n-1] {
			quoted[i] = "'" + e + "'"
		}
		looking := strings.Join(quoted, " or ")
		expected := false
		for _, ends := range p.endStack {
			expected = expected || contains(ends, name)
		}
		if name != "" && expected {
			msg += " You probably made a nesting mistake. Jinja is expecting this tag, but currently looking for " + looking + "."
		} else {
			msg += " Jinja was looking for the following tags: " + looking + "."
		}
	}
	if n := len(p.blockStack); n > 0 {
		msg += fmt.Sprintf(" The innermost block that needs to be closed is '%s'.", p.blockStack[n-1])
	}
	return syntaxErr(line, "%s", msg)
}

// body parses statements up to one of ends and returns which end matched;
// with drop it also consumes the end tag.
func (p *parser) body(ends []string, drop bool) ([]node, string, error) {
	b, err := p.subparse(ends)
	if err != nil {
		return nil, "", err
	}
	end := p.cur().val
	if drop {
		p.next()
		if err := p.expectBlockEnd(); err != nil {
			return nil, "", err
		}
	}
	return b, end, nil
}

func (p *parser) statement() (node, error) {
	t := p.cur()
	if t.kind != tName {
		return nil, p.fail("tag name expected")
	}
	p.blockStack = append(p.blockStack, t.val)
	popped := false
	defer func() {
		if !popped {
			p.blockStack = p.blockStack[:len(p.blockStack)-1]
		}
	}()
	line := t.line
	switch t.val {
	case "if":
		return p.parseIf(line)
	case "for":
		return p.parseFor(line)
	case "set":
		return p.parseSet(line)
	case "macro":
		return p.parseMacro(line)
	case "call":
		return p.parseCallBlock(line)
	case "filter":
		return p.parseFilterBlock(line)
	case "do":
		p.next()
		e, err := p.parseTuple(false, true)
		if err != nil {
			return nil, err
		}
		return &doNode{pos{line}, e}, p.expectBlockEnd()
	case "break", "continue":
		p.next()
		if !p.inLoop() {
			// Jinja compiles this to Python, whose compiler rejects it.
			return nil, &tplError{kind: kindRuntime, msg: fmt.Sprintf("'%s' outside loop", t.val), line: line}
		}
		if err := p.expectBlockEnd(); err != nil {
			return nil, err
		}
		if t.val == "break" {
			return &breakNode{pos{line}}, nil
		}
		return &continueNode{pos{line}}, nil
	case "include":
		return p.parseInclude(line)
	case "import":
		return p.parseImport(line, "")
	case "from":
		return p.parseFrom(line)
	case "with":
		return p.parseWith(line)
	case "import_yaml", "import_json", "import_text":
		return p.parseImport(line, strings.TrimPrefix(t.val, "import_"))
	case "load_yaml", "load_json", "load_text":
		return p.parseLoad(line, strings.TrimPrefix(t.val, "load_"))
	case "profile":
		return p.parseProfile(line)
	case "block":
		return p.parseBlock(line)
	case "extends":
		p.next()
		e, err := p.parseExpression(true)
		if err != nil {
			return nil, err
		}
		return &extendsNode{pos{line}, e}, p.expectBlockEnd()
	case "autoescape":
		p.next()
		if _, err := p.parseExpression(true); err != nil {
			return nil, err
		}
		if err := p.expectBlockEnd(); err != nil {
			return nil, err
		}
		b, _, err := p.body([]string{"endautoescape"}, true)
		return &scopeNode{pos{line}, b}, err
	}
	p.blockStack = p.blockStack[:len(p.blockStack)-1]
	popped = true
	return nil, p.failUnknown(t.val, t.line)
}

// inLoop reports whether a break or continue here would be inside the
// Python loop Jinja compiles a for body to: not in its else clause, not
// in a macro or call block defined in the body.
func (p *parser) inLoop() bool { return p.loopDepth > 0 }

// withLoopDepth parses with loopDepth set to d, restoring it after.
func (p *parser) withLoopDepth(d int, fn func() error) error {
	saved := p.loopDepth
	p.loopDepth = d
	defer func() { p.loopDepth = saved }()
	return fn()
}

func (p *parser) parseIf(line int) (node, error) {
	n := &ifNode{pos: pos{line}}
	p.next()
	for {
		n.condLines = append(n.condLines, p.prev().line)
		cond, err := p.parseTuple(false, false)
		if err != nil {
			return nil, err
		}
		if err := p.expectBlockEnd(); err != nil {
			return nil, err
		}
		b, end, err := p.body([]string{"elif", "else", "endif"}, false)
		if err != nil {
			return nil, err
		}
		n.conds = append(n.conds, cond)
		n.bodies = append(n.bodies, b)
		p.next()
		switch end {
		case "elif":
			continue
		case "else":
			if err := p.expectBlockEnd(); err != nil {
				return nil, err
			}
			n.orelse, _, err = p.body([]string{"endif"}, true)
			return n, err
		}
		return n, p.expectBlockEnd()
	}
}

func (p *parser) parseFor(line int) (node, error) {
	p.next()
	target, err := p.parseAssignTarget()
	if err != nil {
		return nil, err
	}
	if err := p.expectName("in"); err != nil {
		return nil, err
	}
	iter, err := p.parseTuple(true, false)
	if err != nil {
		return nil, err
	}
	n := &forNode{pos: pos{line}, target: target, iter: iter}
	if p.skipName("if") {
		if n.filter, err = p.parseTuple(false, false); err != nil {
			return nil, err
		}
	}
	n.recursive = p.skipName("recursive")
	if err := p.expectBlockEnd(); err != nil {
		return nil, err
	}
	var end string
	outer := p.loopDepth
	err = p.withLoopDepth(outer+1, func() (err error) {
		n.body, end, err = p.body([]string{"endfor", "else"}, true)
		return err
	})
	if err != nil {
		return nil, err
	}
	if end == "else" {
		err = p.withLoopDepth(outer, func() (err error) {
			n.orelse, _, err = p.body([]string{"endfor"}, true)
			return err
		})
	}
	return n, err
}

func (p *parser) parseSet(line int) (node, error) {
	p.next()
	target, err := p.parseAssignTarget()
	if err != nil {
		return nil, err
	}
	if p.skipOp("=") {
		v, err := p.parseTuple(false, true)
		if err != nil {
			return nil, err
		}
		return &setNode{pos{line}, target, v}, p.expectBlockEnd()
	}
	n := &setBlockNode{pos: pos{line}, target: target}
	for p.skipOp("|") {
		f, err := p.parseFilterCall(nil)
		if err != nil {
			return nil, err
		}
		n.filters = append(n.filters, f)
	}
	if err := p.expectBlockEnd(); err != nil {
		return nil, err
	}
	n.body, _, err = p.body([]string{"endset"}, true)
	return n, err
}

func (p *parser) parseAssignTarget() (expr, error) {
	line := p.cur().line
	var items []expr
	trailing := false
	for {
		if len(items) > 0 {
			if !p.skipOp(",") {
				break
			}
			trailing = true
			if p.cur().kind != tName && !p.isOp("(") {
				break
			}
		}
		e, err := p.assignTargetItem()
		if err != nil {
			return nil, err
		}
		items = append(items, e)
		trailing = false
	}
	if len(items) == 1 && !trailing {
		return items[0], nil
	}
	return &tupleExpr{pos{line}, items}, nil
}

func (p *parser) assignTargetItem() (expr, error) {
	line := p.cur().line
	if p.skipOp("(") {
		e, err := p.parseAssignTarget()
		if err != nil {
			return nil, err
		}
		return e, p.expectOp(")")
	}
	if p.cur().kind != tName {
		return nil, p.fail("Expected an expression, got '%s'", describe(p.cur()))
	}
	name := p.next().val
	var e expr = &nameExpr{pos{line}, name}
	if p.skipOp(".") {
		attr, err := p.identifier()
		if err != nil {
			return nil, err
		}
		e = &getattrExpr{pos{line}, e, attr}
	}
	return e, nil
}

// parseSignature reads "(a, b=1)" for macros and call blocks.
func (p *parser) parseSignature(m *macroDef) error {
	if err := p.expectOp("("); err != nil {
		return err
	}
	for !p.isOp(")") {
		if len(m.params) > 0 {
			if err := p.expectOp(","); err != nil {
				return err
			}
			if p.isOp(")") {
				break
			}
		}
		name, err := p.identifier()
		if err != nil {
			return err
		}
		m.params = append(m.params, name)
		if p.skipOp("=") {
			d, err := p.parseExpression(true)
			if err != nil {
				return err
			}
			m.defaults = append(m.defaults, d)
		} else if len(m.defaults) > 0 {
			return p.fail("non-default argument follows default argument")
		}
	}
	p.next()
	return nil
}

func (p *parser) parseMacro(line int) (node, error) {
	p.next()
	name, err := p.identifier()
	if err != nil {
		return nil, err
	}
	m := &macroDef{name: name}
	if err := p.parseSignature(m); err != nil {
		return nil, err
	}
	if err := p.expectBlockEnd(); err != nil {
		return nil, err
	}
	err = p.withLoopDepth(0, func() (err error) {
		m.body, _, err = p.body([]string{"endmacro"}, true)
		return err
	})
	m.scanNames()
	return &macroNode{pos{line}, name, m}, err
}

func (p *parser) parseCallBlock(line int) (node, error) {
	p.next()
	m := &macroDef{name: "caller"}
	if p.isOp("(") {
		if err := p.parseSignature(m); err != nil {
			return nil, err
		}
	}
	e, err := p.parseExpression(true)
	if err != nil {
		return nil, err
	}
	call, ok := e.(*callExpr)
	if !ok {
		return nil, syntaxErr(line, "expected call")
	}
	if err := p.expectBlockEnd(); err != nil {
		return nil, err
	}
	err = p.withLoopDepth(0, func() (err error) {
		m.body, _, err = p.body([]string{"endcall"}, true)
		return err
	})
	m.scanNames()
	return &callBlockNode{pos{line}, call, m}, err
}

func (p *parser) parseFilterBlock(line int) (node, error) {
	p.next()
	n := &filterBlockNode{pos: pos{line}}
	for {
		f, err := p.parseFilterCall(nil)
		if err != nil {
			return nil, err
		}
		n.filters = append(n.filters, f)
		if !p.skipOp("|") {
			break
		}
	}
	if err := p.expectBlockEnd(); err != nil {
		return nil, err
	}
	var err error
	n.body, _, err = p.body([]string{"endfilter"}, true)
	return n, err
}

// parseContextMod reads an optional "with context" / "without context".
func (p *parser) parseContextMod(def bool) bool {
	if (p.isName("with") || p.isName("without")) && p.peek().kind == tName && p.peek().val == "context" {
		with := p.next().val == "with"
		p.next()
		return with
	}
	return def
}

func (p *parser) parseInclude(line int) (node, error) {
	p.next()
	e, err := p.parseExpression(true)
	if err != nil {
		return nil, err
	}
	n := &includeNode{pos: pos{line}, template: e}
	if p.isName("ignore") && p.peek().kind == tName && p.peek().val == "missing" {
		p.next()
		p.next()
		n.ignoreMissing = true
	}
	n.withContext = p.parseContextMod(true)
	return n, p.expectBlockEnd()
}

func (p *parser) parseImport(line int, loadAs string) (node, error) {
	p.next()
	e, err := p.parseExpression(true)
	if err != nil {
		return nil, err
	}
	if err := p.expectName("as"); err != nil {
		return nil, err
	}
	target, err := p.identifier()
	if err != nil {
		return nil, err
	}
	n := &importNode{pos: pos{line}, template: e, target: target, loadAs: loadAs}
	n.withContext = p.parseContextMod(false)
	return n, p.expectBlockEnd()
}

func (p *parser) parseFrom(line int) (node, error) {
	p.next()
	e, err := p.parseExpression(true)
	if err != nil {
		return nil, err
	}
	if err := p.expectName("import"); err != nil {
		return nil, err
	}
	n := &fromImportNode{pos: pos{line}, template: e}
	for {
		if len(n.names) > 0 {
			if !p.skipOp(",") {
				break
			}
		}
		if (p.isName("with") || p.isName("without")) && p.peek().val == "context" {
			break
		}
		if p.cur().kind != tName {
			if len(n.names) == 0 {
				return nil, p.fail("expected token 'name', got '%s'", describe(p.cur()))
			}
			break
		}
		name, _ := p.identifier()
		if strings.HasPrefix(name, "_") {
			return nil, syntaxErr(line, "names starting with an underline can not be imported")
		}
		alias := name
		if p.skipName("as") {
			if alias, err = p.identifier(); err != nil {
				return nil, err
			}
		}
		n.names = append(n.names, [2]string{name, alias})
	}
	n.withContext = p.parseContextMod(false)
	return n, p.expectBlockEnd()
}

func (p *parser) parseWith(line int) (node, error) {
	p.next()
	n := &withNode{pos: pos{line}}
	for p.cur().kind != tBlockEnd {
		if len(n.targets) > 0 {
			if err := p.expectOp(","); err != nil {
				return nil, err
			}
		}
		t, err := p.parseAssignTarget()
		if err != nil {
			return nil, err
		}
		if err := p.expectOp("="); err != nil {
			return nil, err
		}
		v, err := p.parseExpression(true)
		if err != nil {
			return nil, err
		}
		n.targets = append(n.targets, t)
		n.values = append(n.values, v)
	}
	p.next()
	var err error
	n.body, _, err = p.body([]string{"endwith"}, true)
	return n, err
}

func (p *parser) parseLoad(line int, format string) (node, error) {
	p.next()
	if err := p.expectName("as"); err != nil {
		return nil, err
	}
	target, err := p.parseAssignTarget()
	if err != nil {
		return nil, err
	}
	if err := p.expectBlockEnd(); err != nil {
		return nil, err
	}
	b, _, err := p.body([]string{"endload"}, true)
	return &loadNode{pos{line}, format, target, b}, err
}

// parseProfile accepts Salt's {% profile as 'label' %}...{% endprofile %};
// Brine does not log profile timings, so the body just runs in place.
func (p *parser) parseProfile(line int) (node, error) {
	p.next()
	if err := p.expectName("as"); err != nil {
		return nil, err
	}
	if _, err := p.parseExpression(true); err != nil {
		return nil, err
	}
	if err := p.expectBlockEnd(); err != nil {
		return nil, err
	}
	b, _, err := p.body([]string{"endprofile"}, true)
	return &scopeNode{pos{line}, b}, err
}

func (p *parser) parseBlock(line int) (node, error) {
	p.next()
	name, err := p.identifier()
	if err != nil {
		return nil, err
	}
	p.skipName("scoped")
	p.skipName("required")
	if err := p.expectBlockEnd(); err != nil {
		return nil, err
	}
	b, _, err := p.subparseBlock()
	if err != nil {
		return nil, err
	}
	return &blockNode{pos{line}, name, b}, nil
}

func (p *parser) subparseBlock() ([]node, string, error) {
	b, err := p.subparse([]string{"endblock"})
	if err != nil {
		return nil, "", err
	}
	p.next()
	if p.cur().kind == tName {
		p.next()
	}
	return b, "", p.expectBlockEnd()
}
