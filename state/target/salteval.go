package target

import (
	"errors"
	"fmt"
	"strings"
)

// Compile rejects a malformed compound expression with a *SyntaxError.
// CompoundValue and CompoundMinions instead answer what Salt 3006 answers
// for it, word by word as Salt reads it and then as Python's eval() of
// the text Salt builds (see pyeval.go); testdata/compound_malformed.json
// records Salt's own answers.

// EvalError is a compound expression Salt logs as invalid (or raises
// on) and matches nothing with.
type EvalError struct {
	Expr string
	Msg  string
	// Err is the cause: a *PatternError, Python's SyntaxError or
	// TypeError from eval(), or nil.
	Err error
}

// Error reads `compound target "…": message`.
func (e *EvalError) Error() string {
	s := fmt.Sprintf("compound target %q: %s", e.Expr, e.Msg)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the cause.
func (e *EvalError) Unwrap() error { return e.Err }

// saltWords is a compound expression's words as Salt's loop pops them,
// with nodegroups expanded in place as nodegroup_comp does.
type saltWords struct {
	expr    string
	words   []string
	groups  map[string]any
	dropped []error
}

func newSaltWords(expr any, opts Options) (*saltWords, error) {
	words, _, text, err := compoundWords(expr)
	if err != nil {
		// parse_target raises on a non-string word; a target that is
		// neither a string nor a list is logged and matches nothing.
		return nil, &EvalError{Expr: fmt.Sprint(expr), Msg: "not a string or a list of strings", Err: err}
	}
	return &saltWords{expr: text, words: words, groups: opts.Nodegroups}, nil
}

func (s *saltWords) errorf(cause error, format string, args ...any) error {
	return &EvalError{Expr: s.expr, Msg: fmt.Sprintf(format, args...), Err: cause}
}

// next pops a word; engine words come back split. A nodegroup is
// expanded in front of the remaining words and the next word returned;
// one that expands to nothing is dropped, as Salt's `if decomposed`.
func (s *saltWords) next() (w string, eng byte, delim, pat string, ok bool, err error) {
	for len(s.words) > 0 {
		w, s.words = s.words[0], s.words[1:]
		if isOper(w) {
			return w, 0, "", "", true, nil
		}
		eng, delim, pat, isEng := parseTargetWord(w)
		if !isEng || eng != 'N' {
			return w, eng, delim, pat, true, nil
		}
		exp, err := expandNodegroupSalt(pat, s.groups, &s.dropped)
		if err != nil {
			return "", 0, "", "", false, s.errorf(err, "expand %q", w)
		}
		s.words = append(append([]string(nil), exp...), s.words...)
	}
	return "", 0, "", "", false, nil
}

// CompoundValue is what salt/modules/match.py's compound returns for m:
// compound_match.py's match, or False where that raises. The value is
// true, false or, where Salt's eval() yields an empty list or tuple
// ("S@bad", "( )", "x and S@bad"), []any{}. err is an *EvalError when
// Salt logs the expression as invalid (the value is then false), or
// wraps ErrUnsupported when Brine cannot evaluate a word Salt can (the
// value is then nil). dropped lists the nodegroups Salt drops with an
// error in its log.
func CompoundValue(expr any, m *Minion, opts Options) (value any, dropped []error, err error) {
	s, err := newSaltWords(expr, opts)
	if err != nil {
		return false, nil, err
	}
	toks, err := s.minionTokens(m)
	if err != nil {
		if errors.Is(err, ErrUnsupported) {
			return nil, s.dropped, err
		}
		return false, s.dropped, err
	}
	v, err := evalPy(toks)
	if err != nil {
		return false, s.dropped, s.errorf(err, "invalid compound target")
	}
	switch v.kind {
	case pyTrue:
		return true, s.dropped, nil
	case pyList, pyTuple:
		return []any{}, s.dropped, nil
	}
	return false, s.dropped, nil
}

// minionTokens is compound_match.py's loop: operators are checked as it
// checks them, each target is matched at once (so an error in any of
// them is raised whatever the operators around it), a "not" after a
// value gets an "and".
func (s *saltWords) minionTokens(m *Minion) ([]pyTok, error) {
	var toks []pyTok
	for {
		w, eng, delim, pat, ok, err := s.next()
		if err != nil || !ok {
			return toks, err
		}
		if isOper(w) {
			if toks, err = s.minionOper(toks, w); err != nil {
				return nil, err
			}
			continue
		}
		t, err := s.minionOperand(w, eng, delim, pat, m)
		if err != nil {
			return nil, err
		}
		toks = append(toks, t)
	}
}

var operTok = map[string]pyKind{"and": pyAnd, "or": pyOr, "not": pyNot, "(": pyLParen, ")": pyRParen}

func (s *saltWords) minionOper(toks []pyTok, w string) ([]pyTok, error) {
	k := operTok[w]
	if len(toks) == 0 {
		if k != pyLParen && k != pyNot {
			return nil, s.errorf(nil, "invalid beginning operator: %s", w)
		}
		return append(toks, pyTok{kind: k}), nil
	}
	last := toks[len(toks)-1].kind
	if last == pyLParen && (k == pyAnd || k == pyOr) {
		return nil, s.errorf(nil, "invalid beginning operator after \"(\": %s", w)
	}
	if k == pyNot && last != pyAnd && last != pyOr && last != pyLParen {
		toks = append(toks, pyTok{kind: pyAnd})
	}
	return append(toks, pyTok{kind: k}), nil
}

func boolTok(b bool) pyTok {
	if b {
		return pyTok{kind: pyTrue}
	}
	return pyTok{kind: pyFalse}
}

// minionOperand calls the word's matcher as compound_match.py does.
func (s *saltWords) minionOperand(w string, eng byte, delim, pat string, m *Minion) (pyTok, error) {
	switch eng {
	case 0:
		g, err := compileGlobMatcher(w)
		if err != nil {
			return pyTok{}, s.errorf(err, "glob %q", w)
		}
		return boolTok(g.Match(m)), nil
	case 'G', 'P', 'I', 'J':
		sd, err := saltSubdict(eng, delim, pat, false)
		if err != nil {
			return pyTok{}, s.errorf(err, "%q", w)
		}
		return boolTok(sd != nil && sd.Match(m)), nil
	case 'L':
		l, _ := compileList(pat)
		return boolTok(l.Match(m)), nil
	case 'S':
		c, err := compileIPCIDR(pat)
		if err != nil {
			return pyTok{kind: pyList}, nil // ipcidr_match.py: log.error, return []
		}
		return boolTok(c.match(m.Grains)), nil
	case 'E':
		re, err := compilePCREMatcher(pat)
		if err != nil {
			// re.match raises re.error out of compound_match.match.
			return pyTok{}, s.errorf(err, "%q", w)
		}
		return boolTok(re.Match(m)), nil
	}
	// R@: no range engine without seco.range; Salt logs "Unrecognized
	// target engine" and returns False.
	return pyTok{}, s.errorf(nil, "unrecognized target engine %q for target expression %q", string(eng), w)
}

// saltSubdict compiles a G@ P@ I@ J@ word's pattern; nil (no error)
// for one without the delimiter, which Salt matches with nothing.
func saltSubdict(eng byte, delim, pat string, pillarExact bool) (Matcher, error) {
	if delim == "" {
		delim = DefaultDelimiter
	}
	kind := map[byte]Kind{'G': Grain, 'P': GrainPCRE, 'I': Pillar, 'J': PillarPCRE}[eng]
	if pillarExact && (eng == 'I' || eng == 'J') {
		kind = PillarExact
	}
	if !strings.Contains(pat, delim) {
		return nil, nil
	}
	return compileSubdictMatcher(pat, kind, delim, false)
}

// MinionData returns a minion's id, grains and pillar from the master's
// minion data cache, and false for a minion without cached data.
type MinionData func(id string) (*Minion, bool)

// CompoundMinions is CkMinions._check_compound_minions of
// salt/utils/minions.py with minion_data_cache and greedy on, as
// check_minions calls it: the ids (of all, the accepted minions) the
// expression reaches, each word evaluated as a set of ids and the sets
// combined with Python's &, | and -. A grain, pillar or ipcidr word
// keeps minions without cached data; pillarExact is
// compound_pillar_exact. Where Salt logs an error and returns no
// minions, err is an *EvalError, or wraps ErrUnsupported where Brine
// cannot evaluate a word Salt can. dropped lists the nodegroups Salt
// drops with an error in its log.
func CompoundMinions(expr any, all []string, data MinionData, pillarExact bool, opts Options) (ids []string, dropped []error, err error) {
	s, err := newSaltWords(expr, opts)
	if err != nil {
		return nil, nil, err
	}
	ms := &masterSets{s: s, all: all, data: data, pillarExact: pillarExact}
	for _, id := range all {
		if _, ok := data(id); ok {
			ms.anyData = true
			break
		}
	}
	toks, err := ms.tokens()
	if err != nil {
		return nil, s.dropped, err
	}
	v, err := evalPy(toks)
	if err != nil {
		return nil, s.dropped, s.errorf(err, "invalid compound target")
	}
	if v.kind != pySet {
		return []string{}, s.dropped, nil // list(()) of "( )"
	}
	return sortedSet(v.set), s.dropped, nil
}

type masterSets struct {
	s           *saltWords
	all         []string
	data        MinionData
	pillarExact bool
	anyData     bool
	toks        []pyTok
	unmatched   []pyKind // "(" and "-" (a pending not)
}

func (ms *masterSets) setOf(pred func(id string) bool) pyTok {
	set := map[string]struct{}{}
	for _, id := range ms.all {
		if pred(id) {
			set[id] = struct{}{}
		}
	}
	return pyTok{kind: pySet, set: set}
}

// tokens is _check_compound_minions's loop: "not" becomes
// "( <all> -" closed after the next target or group, unclosed groups are
// closed at the end.
func (ms *masterSets) tokens() ([]pyTok, error) {
	for {
		w, eng, delim, pat, ok, err := ms.s.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		if isOper(w) {
			if err := ms.oper(w); err != nil {
				return nil, err
			}
			continue
		}
		t, err := ms.operand(w, eng, delim, pat)
		if err != nil {
			return nil, err
		}
		ms.toks = append(ms.toks, t)
		ms.closeNot()
	}
	for range ms.unmatched {
		ms.toks = append(ms.toks, pyTok{kind: pyRParen})
	}
	return ms.toks, nil
}

func (ms *masterSets) closeNot() {
	if n := len(ms.unmatched); n > 0 && ms.unmatched[n-1] == pyMinus {
		ms.toks = append(ms.toks, pyTok{kind: pyRParen})
		ms.unmatched = ms.unmatched[:n-1]
	}
}

func (ms *masterSets) oper(w string) error {
	k := operTok[w]
	if len(ms.toks) == 0 && (k == pyAnd || k == pyOr || k == pyRParen) {
		return ms.s.errorf(nil, "expression may begin with binary operator: %s", w)
	}
	if n := len(ms.toks); n > 0 && ms.toks[n-1].kind == pyLParen && (k == pyAnd || k == pyOr) {
		return ms.s.errorf(nil, "invalid beginning operator after \"(\": %s", w)
	}
	switch k {
	case pyNot:
		if n := len(ms.toks); n > 0 {
			if last := ms.toks[n-1].kind; last != pyBitAnd && last != pyBitOr && last != pyLParen {
				ms.toks = append(ms.toks, pyTok{kind: pyBitAnd})
			}
		}
		ms.toks = append(ms.toks, pyTok{kind: pyLParen}, ms.setOf(func(string) bool { return true }), pyTok{kind: pyMinus})
		ms.unmatched = append(ms.unmatched, pyMinus)
	case pyAnd:
		ms.toks = append(ms.toks, pyTok{kind: pyBitAnd})
	case pyOr:
		ms.toks = append(ms.toks, pyTok{kind: pyBitOr})
	case pyLParen:
		ms.toks = append(ms.toks, pyTok{kind: pyLParen})
		ms.unmatched = append(ms.unmatched, pyLParen)
	case pyRParen:
		n := len(ms.unmatched)
		if n == 0 || ms.unmatched[n-1] != pyLParen {
			return ms.s.errorf(nil, "invalid compound expr (unexpected right parenthesis)")
		}
		ms.toks = append(ms.toks, pyTok{kind: pyRParen})
		ms.unmatched = ms.unmatched[:n-1]
		ms.closeNot()
	}
	return nil
}

// operand is the set of ids one target word reaches, as the
// CkMinions._check_*_minions function for its engine finds it.
func (ms *masterSets) operand(w string, eng byte, delim, pat string) (pyTok, error) {
	switch eng {
	case 0:
		g, err := compileGlobMatcher(w)
		if err != nil {
			return pyTok{}, ms.s.errorf(err, "glob %q", w)
		}
		return ms.setOf(func(id string) bool { return g.Match(&Minion{ID: id}) }), nil
	case 'E':
		re, err := compilePCREMatcher(pat)
		if err != nil {
			return pyTok{}, ms.s.errorf(err, "%q", w) // re.compile raises
		}
		return ms.setOf(func(id string) bool { return re.Match(&Minion{ID: id}) }), nil
	case 'L':
		want := map[string]bool{}
		for _, id := range strings.Split(pat, ",") {
			want[id] = id != ""
		}
		return ms.setOf(func(id string) bool { return want[id] }), nil
	case 'G', 'P', 'I', 'J':
		sd, err := saltSubdict(eng, delim, pat, ms.pillarExact)
		if err != nil {
			return pyTok{}, ms.s.errorf(err, "%q", w)
		}
		if !ms.anyData {
			return ms.setOf(func(string) bool { return true }), nil // no cached minions: all of them
		}
		return ms.cached(func(m *Minion) bool { return sd != nil && sd.Match(m) }), nil
	case 'S':
		c, err := compileIPCIDR(pat)
		if err != nil {
			return pyTok{kind: pySet, set: map[string]struct{}{}}, nil // logged; no minions
		}
		return ms.cached(func(m *Minion) bool { return c.match(m.Grains) }), nil
	}
	// R@: _all_minions(expr, greedy) takes one argument; the TypeError
	// is logged by check_minions and nothing is targeted.
	return pyTok{}, ms.s.errorf(nil, "range targets (R@) fail in Salt's CkMinions with a TypeError")
}

// cached keeps the minions whose cached data matches, and those without
// cached data (greedy).
func (ms *masterSets) cached(match func(m *Minion) bool) pyTok {
	return ms.setOf(func(id string) bool {
		m, ok := ms.data(id)
		return !ok || match(m)
	})
}
