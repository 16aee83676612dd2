package target

import (
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
)

// subdictMode selects how subdict_match compares a leaf value.
type subdictMode uint8

const (
	modeGlob  subdictMode = iota // fnmatch on lowercased str(value)
	modeRegex                    // re.match on lowercased str(value)
	modeExact                    // == on lowercased str(value)
)

// subdict is a compiled salt.utils.data.subdict_match(data, expr,
// delimiter): every way of splitting expr into a key path and a value
// pattern, deepest key first.
type subdict struct {
	cands []subdictCand
}

type subdictCand struct {
	whole bool // the key is "*": the pattern is the whole expression, tried on the data itself
	path  []keyPart
	leaf  *leafMatcher
	dict  *dictMatcher
}

// keyPart is one component of a traversal key with the forms
// traverse_dict_and_list may try it in.
type keyPart struct {
	s       string
	idx     int
	isInt   bool
	yaml    any
	hasYaml bool
}

// leafMatcher is subdict_match's _match for one pattern.
type leafMatcher struct {
	mode  subdictMode
	pat   string // lowercased
	glob  *glob
	re    *regexp.Regexp
	err   error // the pattern cannot compile; it never matches
	isAll bool  // glob "*"
}

// dictMatcher is subdict_match's _dict_match for one pattern.
type dictMatcher struct {
	wildcard bool // the pattern began with "*:"
	pattern  string
	sub      *subdict
	leaf     *leafMatcher
	inner    *dictMatcher
}

// subdictCompiler memoizes the pieces of a subdict tree: the recursion
// of _dict_match revisits the same suffixes of the expression.
type subdictCompiler struct {
	mode        subdictMode
	unsupported error       // the first pattern RE2 cannot run, if any
	invalid     *badPattern // the first regex Python would reject, if any
	valid       bool        // some regex compiled
	subs        map[[2]string]*subdict
	dicts       map[string]*dictMatcher
	leafs       map[string]*leafMatcher
}

// badPattern is a value pattern Python's re would reject, as it was
// tried (lowercased, as subdict_match tries it).
type badPattern struct{ pattern, msg string }

func (b *badPattern) Error() string { return fmt.Sprintf("%q: %s", b.pattern, b.msg) }

func newSubdictCompiler(mode subdictMode) *subdictCompiler {
	return &subdictCompiler{
		mode:  mode,
		subs:  map[[2]string]*subdict{},
		dicts: map[string]*dictMatcher{},
		leafs: map[string]*leafMatcher{},
	}
}

// compileSubdict compiles expr split by delim. The caller has checked
// that delim is not empty.
func (c *subdictCompiler) subdict(expr, delim string) *subdict {
	key := [2]string{expr, delim}
	if s, ok := c.subs[key]; ok {
		return s
	}
	s := &subdict{}
	c.subs[key] = s
	splits := strings.Split(expr, delim)
	for idx := len(splits) - 1; idx > 0; idx-- {
		k := strings.Join(splits[:idx], delim)
		var cand subdictCand
		matchstr := expr
		if k == "*" {
			cand.whole = true
		} else {
			matchstr = strings.Join(splits[idx:], delim)
			for _, p := range strings.Split(k, delim) {
				cand.path = append(cand.path, newKeyPart(p))
			}
		}
		cand.leaf = c.leaf(matchstr)
		cand.dict = c.dict(matchstr)
		s.cands = append(s.cands, cand)
	}
	return s
}

func newKeyPart(s string) keyPart {
	kp := keyPart{s: s}
	kp.idx, kp.isInt = pyInt(s)
	kp.yaml, kp.hasYaml = yamlifyKey(s)
	return kp
}

func (c *subdictCompiler) dict(pattern string) *dictMatcher {
	if d, ok := c.dicts[pattern]; ok {
		return d
	}
	d := &dictMatcher{}
	c.dicts[pattern] = d
	p, wild := strings.CutPrefix(pattern, "*:")
	d.wildcard, d.pattern = wild, p
	// _dict_match recurses with the default ":" delimiter whatever the
	// caller's delimiter was (salt/utils/data.py).
	d.sub = c.subdict(p, ":")
	if wild {
		d.leaf = c.leaf(p)
		d.inner = c.dict(p)
	}
	return d
}

func (c *subdictCompiler) leaf(pattern string) *leafMatcher {
	if l, ok := c.leafs[pattern]; ok {
		return l
	}
	l := &leafMatcher{mode: c.mode, pat: strings.ToLower(pattern)}
	switch c.mode {
	case modeGlob:
		l.glob, l.err = compileGlob(l.pat)
		l.isAll = l.pat == "*"
	case modeRegex:
		l.re, l.err = compilePyRegex(l.pat)
		var pe *PatternError
		switch {
		case l.err == nil:
			c.valid = true
		case errors.Is(l.err, ErrUnsupportedRegex):
			if c.unsupported == nil {
				c.unsupported = l.err
			}
		case c.invalid == nil && errors.As(l.err, &pe):
			c.invalid = &badPattern{pattern: l.pat, msg: pe.Msg}
			var se *syntax.Error
			if errors.As(pe.Err, &se) {
				// RE2's text quotes the wrapped pattern; its code is enough.
				c.invalid.msg += ": " + string(se.Code)
			}
		}
	}
	c.leafs[pattern] = l
	return l
}

func (s *subdict) match(data any) bool {
	for i := range s.cands {
		cand := &s.cands[i]
		var m any
		if cand.whole {
			m = data
		} else {
			var ok bool
			if m, ok = traverse(data, cand.path); !ok {
				continue
			}
		}
		switch x := m.(type) {
		case *ordered.Map:
			if x.Len() == 0 { // `match == {}`: not found, or an empty dict
				continue
			}
			if cand.dict.match(x) {
				return true
			}
		case []any:
			for _, member := range x {
				if mm, ok := member.(*ordered.Map); ok && cand.dict.match(mm) {
					return true
				}
				if cand.leaf.match(member) {
					return true
				}
			}
		default:
			if cand.leaf.match(m) {
				return true
			}
		}
	}
	return false
}

func (d *dictMatcher) match(target *ordered.Map) bool {
	if d.pattern == "*" {
		return true
	}
	if target.Has(d.pattern) {
		return true
	}
	if d.sub.match(target) {
		return true
	}
	if !d.wildcard {
		return false
	}
	found := false
	target.Range(func(_, v any) bool {
		switch x := v.(type) {
		case *ordered.Map:
			found = d.inner.match(x)
		case []any:
			for _, item := range x {
				if found = d.leaf.match(item); found {
					break
				}
			}
		default:
			found = d.leaf.match(v)
		}
		return !found
	})
	return found
}

func (l *leafMatcher) match(v any) bool {
	if l.err != nil {
		return false
	}
	if l.isAll {
		return true
	}
	t := py.Str(v)
	switch l.mode {
	case modeGlob:
		return l.glob.matchLower(t)
	case modeRegex:
		return l.re.MatchString(strings.ToLower(t))
	}
	return equalLower(t, l.pat)
}

// traverse is salt.utils.data.traverse_dict_and_list; false stands for
// the default it returns when a key is missing.
func traverse(data any, path []keyPart) (any, bool) {
	ptr := data
	for i := range path {
		part := &path[i]
		switch x := ptr.(type) {
		case []any:
			v, ok := traverseList(x, part)
			if !ok {
				return nil, false
			}
			ptr = v
		case *ordered.Map:
			v, ok := x.Get(part.s)
			if !ok && part.hasYaml {
				// A key like "1" or "true" finds a non-string dict key.
				v, ok = pyLookup(x, part.yaml)
			}
			if !ok {
				return nil, false
			}
			ptr = v
		default:
			return nil, false
		}
	}
	return ptr, true
}

// traverseList indexes a list the way traverse_dict_and_list does: dicts
// embedded in the list are searched for the key first, then a numeric key
// indexes the list itself (negative from the end, as in Python).
func traverseList(list []any, part *keyPart) (any, bool) {
	for _, e := range list {
		emb, ok := e.(*ordered.Map)
		if !ok {
			continue
		}
		var v any
		if part.isInt {
			v, ok = pyLookup(emb, part.idx)
		} else {
			v, ok = emb.Get(part.s)
		}
		if ok {
			return v, true
		}
	}
	if !part.isInt {
		return nil, false
	}
	i := part.idx
	if i < 0 {
		i += len(list)
	}
	if i < 0 || i >= len(list) {
		return nil, false
	}
	return list[i], true
}
