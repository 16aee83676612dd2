package target

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// The compound matcher follows salt/matchers/compound_match.py: the
// expression is split into words; each word is an operator (and, or,
// not, parentheses) or a target, either engine-prefixed (G@ P@ I@ J@ L@
// S@ E@ N@, with an optional one-character delimiter for G P I J as in
// G;@key;value) or a bare glob on the minion id. Salt turns the words
// into a Python boolean expression and eval()s it, so Python precedence
// applies: not binds tightest, then and, then or. A "not" directly after
// a target gets an implicit "and" in front ("web* not db*").

type tokKind uint8

const (
	tOperand tokKind = iota
	tAnd
	tOr
	tNot
	tLParen
	tRParen
)

type token struct {
	kind tokKind
	word string
	pos  int
	m    Matcher
}

type compoundCompiler struct {
	expr        string
	opts        Options
	pillarExact bool
	toks        []token
	opens       []token // unclosed "(" tokens
}

type queued struct {
	word  string
	pos   int
	group string // the nodegroup the word came from, if any
}

func compileCompound(expr any, pillarExact bool, opts Options) (Matcher, error) {
	return compileCompoundIn(expr, pillarExact, opts, "")
}

// compileCompoundIn compiles a compound expression; group names the
// nodegroup it is the expansion of, if any.
func compileCompoundIn(expr any, pillarExact bool, opts Options, group string) (Matcher, error) {
	words, offs, text, err := compoundWords(expr)
	if err != nil {
		return nil, err
	}
	c := &compoundCompiler{expr: text, opts: opts, pillarExact: pillarExact}
	queue := make([]queued, len(words))
	for i, w := range words {
		queue[i] = queued{word: w, pos: offs[i], group: group}
	}
	if err := c.scan(queue); err != nil {
		return nil, err
	}
	p := parser{toks: c.toks}
	return p.or(), nil
}

// compoundWords splits a string on whitespace or takes a list's items as
// words, returning their offsets in the text the errors quote.
func compoundWords(expr any) ([]string, []int, string, error) {
	var words []string
	switch x := expr.(type) {
	case string:
		w, offs := pyFields(x)
		return w, offs, x, nil
	case []string:
		words = x
	case []any:
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, nil, "", fmt.Errorf("compile compound target: word %v is %T, not a string", e, e)
			}
			words = append(words, s)
		}
	default:
		return nil, nil, "", fmt.Errorf("compile compound target: got %T, want a string or a list", expr)
	}
	offs := make([]int, len(words))
	n := 0
	for i, w := range words {
		offs[i] = n
		n += len(w) + 1
	}
	return words, offs, strings.Join(words, " "), nil
}

func (c *compoundCompiler) errorf(q queued, cause error, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if q.group != "" {
		msg += fmt.Sprintf(" (in nodegroup %q)", q.group)
	}
	return &SyntaxError{Expr: c.expr, Pos: q.pos, Token: q.word, Msg: msg, Err: cause}
}

func (c *compoundCompiler) last() (tokKind, bool) {
	if len(c.toks) == 0 {
		return 0, false
	}
	return c.toks[len(c.toks)-1].kind, true
}

// scan turns words into tokens, expanding nodegroups in place and
// rejecting every sequence Salt's eval() would fail on.
func (c *compoundCompiler) scan(queue []queued) error {
	if len(queue) == 0 {
		return &SyntaxError{Expr: c.expr, Msg: "empty expression"}
	}
	var end queued
	for len(queue) > 0 {
		q := queue[0]
		queue = queue[1:]
		end = q
		if isOper(q.word) {
			if err := c.oper(q); err != nil {
				return err
			}
			continue
		}
		eng, _, pat, ok := parseTargetWord(q.word)
		if ok && eng == 'N' {
			words, err := expandNodegroup(pat, c.opts.Nodegroups, nil, true)
			if err != nil {
				return c.errorf(q, err, "%v", err)
			}
			group := q.group
			if group == "" {
				group = pat
			}
			exp := make([]queued, len(words))
			for i, w := range words {
				exp[i] = queued{word: w, pos: q.pos, group: group}
			}
			queue = append(exp, queue...)
			continue
		}
		if k, ok := c.last(); ok && (k == tOperand || k == tRParen) {
			return c.errorf(q, nil, "missing operator before target")
		}
		m, err := c.operand(q)
		if err != nil {
			return err
		}
		c.toks = append(c.toks, token{kind: tOperand, word: q.word, pos: q.pos, m: m})
	}
	if k, ok := c.last(); !ok {
		return &SyntaxError{Expr: c.expr, Pos: end.pos, Token: end.word, Msg: "expression is empty after nodegroup expansion"}
	} else if k == tAnd || k == tOr || k == tNot {
		return c.errorf(end, nil, "dangling operator at end of expression")
	}
	if len(c.opens) > 0 {
		o := c.opens[len(c.opens)-1]
		return &SyntaxError{Expr: c.expr, Pos: o.pos, Token: o.word, Msg: "unbalanced parenthesis: no matching \")\""}
	}
	return nil
}

func (c *compoundCompiler) oper(q queued) error {
	last, has := c.last()
	value := has && (last == tOperand || last == tRParen)
	switch q.word {
	case "and", "or":
		switch {
		case !has:
			return c.errorf(q, nil, "expression cannot begin with a binary operator")
		case last == tLParen:
			return c.errorf(q, nil, "binary operator cannot follow \"(\"")
		case !value:
			return c.errorf(q, nil, "binary operator cannot follow %q", c.toks[len(c.toks)-1].word)
		}
		k := tAnd
		if q.word == "or" {
			k = tOr
		}
		c.toks = append(c.toks, token{kind: k, word: q.word, pos: q.pos})
	case "not":
		if has && last == tNot {
			return c.errorf(q, nil, "\"not not\" is invalid: Salt reads it as \"not and not\"")
		}
		if value {
			c.toks = append(c.toks, token{kind: tAnd, word: "and", pos: q.pos})
		}
		c.toks = append(c.toks, token{kind: tNot, word: q.word, pos: q.pos})
	case "(":
		if value {
			return c.errorf(q, nil, "missing operator before \"(\"")
		}
		t := token{kind: tLParen, word: q.word, pos: q.pos}
		c.toks = append(c.toks, t)
		c.opens = append(c.opens, t)
	case ")":
		switch {
		case len(c.opens) == 0:
			return c.errorf(q, nil, "unbalanced parenthesis: no matching \"(\"")
		case last == tLParen:
			return c.errorf(q, nil, "empty parentheses")
		case !value:
			return c.errorf(q, nil, "dangling operator %q before \")\"", c.toks[len(c.toks)-1].word)
		}
		c.opens = c.opens[:len(c.opens)-1]
		c.toks = append(c.toks, token{kind: tRParen, word: q.word, pos: q.pos})
	}
	return nil
}

// parseTargetWord splits a word as salt.utils.minions.TARGET_REX does:
// an engine letter, for G P I J an optional one-character delimiter, "@"
// and a non-empty pattern. ok is false for a bare glob.
func parseTargetWord(w string) (engine byte, delim, pattern string, ok bool) {
	if len(w) < 3 || !strings.ContainsRune("GPIJLNSER", rune(w[0])) {
		return 0, "", "", false
	}
	if strings.ContainsRune("GPIJ", rune(w[0])) {
		r, size := utf8.DecodeRuneInString(w[1:])
		if r != '\n' && 1+size < len(w)-1 && w[1+size] == '@' {
			return w[0], w[1 : 1+size], w[2+size:], true
		}
	}
	if w[1] == '@' {
		return w[0], "", w[2:], true
	}
	return 0, "", "", false
}

// operand compiles one target word.
func (c *compoundCompiler) operand(q queued) (Matcher, error) {
	w := q.word
	if strings.ContainsRune(w, '\n') {
		return nil, c.errorf(q, nil, "newline in target word")
	}
	eng, delim, pat, ok := parseTargetWord(w)
	if !ok {
		if engineWordRe.MatchString(w) {
			if len(w) == 2 && strings.ContainsRune("GPIJLNSE", rune(w[0])) {
				if q.group != "" {
					// An empty nodegroup expands to "L@", which Salt
					// reads as a glob on the literal id "L@".
					return compileGlobMatcher(w)
				}
				return nil, c.errorf(q, nil, "missing pattern after %q", w)
			}
			if w[0] == 'R' {
				return nil, c.errorf(q, ErrUnsupported, "range targets (R@) are not supported")
			}
			return nil, c.errorf(q, nil, "unknown target engine %q", w[:2])
		}
		m, err := compileGlobMatcher(w)
		return m, c.wrap(q, err)
	}
	var m Matcher
	var err error
	switch eng {
	case 'G', 'P', 'I', 'J':
		if delim == "" {
			delim = DefaultDelimiter
		}
		m, err = compileSubdictMatcher(pat, c.subdictKind(eng), delim, c.opts.RejectBadRegex)
	case 'L':
		m, err = compileList(pat)
	case 'S':
		var ip *ipcidr
		if ip, err = compileIPCIDR(pat); err == nil {
			m = ipcidrMatcher{ip}
		}
	case 'E':
		m, err = compilePCREMatcher(pat)
	case 'R':
		return nil, c.errorf(q, ErrUnsupported, "range targets (R@) are not supported")
	}
	return m, c.wrap(q, err)
}

func (c *compoundCompiler) subdictKind(eng byte) Kind {
	switch {
	case eng == 'G':
		return Grain
	case eng == 'P':
		return GrainPCRE
	case c.pillarExact:
		return PillarExact
	case eng == 'I':
		return Pillar
	}
	return PillarPCRE
}

func (c *compoundCompiler) wrap(q queued, err error) error {
	if err == nil {
		return nil
	}
	var pe *PatternError
	msg := err.Error()
	if errors.As(err, &pe) {
		msg = pe.Msg
		if pe.Err != nil {
			msg += ": " + pe.Err.Error()
		}
	}
	return c.errorf(q, err, "%s", msg)
}

// parser builds the expression tree from a validated token stream with
// Python's precedence.
type parser struct {
	toks []token
	i    int
}

func (p *parser) peek() (tokKind, bool) {
	if p.i >= len(p.toks) {
		return 0, false
	}
	return p.toks[p.i].kind, true
}

func (p *parser) or() Matcher {
	terms := []Matcher{p.and()}
	for k, ok := p.peek(); ok && k == tOr; k, ok = p.peek() {
		p.i++
		terms = append(terms, p.and())
	}
	if len(terms) == 1 {
		return terms[0]
	}
	return orNode(terms)
}

func (p *parser) and() Matcher {
	terms := []Matcher{p.not()}
	for k, ok := p.peek(); ok && k == tAnd; k, ok = p.peek() {
		p.i++
		terms = append(terms, p.not())
	}
	if len(terms) == 1 {
		return terms[0]
	}
	return andNode(terms)
}

func (p *parser) not() Matcher {
	t := p.toks[p.i]
	p.i++
	switch t.kind {
	case tNot:
		return notNode{p.not()}
	case tLParen:
		m := p.or()
		p.i++ // the ")" the scanner checked is there
		return m
	}
	return t.m
}

type andNode []Matcher

func (n andNode) Match(m *Minion) bool {
	for _, x := range n {
		if !x.Match(m) {
			return false
		}
	}
	return true
}

type orNode []Matcher

func (n orNode) Match(m *Minion) bool {
	for _, x := range n {
		if x.Match(m) {
			return true
		}
	}
	return false
}

type notNode struct{ x Matcher }

func (n notNode) Match(m *Minion) bool { return !n.x.Match(m) }
