package target

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// glob is a compiled shell pattern with the semantics of Python's
// fnmatch.fnmatch on POSIX, which is what Salt's glob matcher
// (salt/matchers/glob_match.py) and subdict_match use: case-sensitive,
// `*` and `?` cross every character including `/` and newlines, `[...]`
// and `[!...]` classes, and an unterminated `[` taken literally.
type glob struct {
	items   []globItem
	literal string // the whole pattern when it has no metacharacters
	isLit   bool
}

type globKind uint8

const (
	gLit globKind = iota
	gAny
	gStar
	gClass
)

type globItem struct {
	kind globKind
	r    rune
	cls  *runeClass
}

// runeClass is a bracket expression reduced to code point ranges.
type runeClass struct {
	neg    bool
	ranges [][2]rune
}

func (c *runeClass) has(r rune) bool {
	in := false
	for _, rg := range c.ranges {
		if r >= rg[0] && r <= rg[1] {
			in = true
			break
		}
	}
	return in != c.neg
}

var (
	classNone = &runeClass{}          // Python's "(?!)": never matches
	classAll  = &runeClass{neg: true} // Python's ".": any character
)

// compileGlob translates pat the way CPython's fnmatch.translate does
// (Lib/fnmatch.py), including its treatment of hyphens and reversed
// ranges inside brackets. An error means CPython's re module would raise
// on the translated pattern ("bad character range").
func compileGlob(pat string) (*glob, error) {
	if !strings.ContainsAny(pat, "*?[") {
		return &glob{literal: pat, isLit: true}, nil
	}
	p := []rune(pat)
	g := &glob{}
	for i := 0; i < len(p); {
		c := p[i]
		i++
		switch c {
		case '*':
			if n := len(g.items); n == 0 || g.items[n-1].kind != gStar {
				g.items = append(g.items, globItem{kind: gStar})
			}
		case '?':
			g.items = append(g.items, globItem{kind: gAny})
		case '[':
			cls, next, err := parseGlobClass(p, i)
			if err != nil {
				return nil, fmt.Errorf("glob %q: %w", pat, err)
			}
			if cls == nil {
				g.items = append(g.items, globItem{kind: gLit, r: '['})
				continue
			}
			g.items = append(g.items, globItem{kind: gClass, cls: cls})
			i = next
		default:
			g.items = append(g.items, globItem{kind: gLit, r: c})
		}
	}
	return g, nil
}

// parseGlobClass reads the bracket expression whose body starts at p[i]
// (just after '['). It returns a nil class when the bracket is not closed,
// in which case the '[' is a literal.
func parseGlobClass(p []rune, i int) (*runeClass, int, error) {
	n := len(p)
	j := i
	if j < n && p[j] == '!' {
		j++
	}
	if j < n && p[j] == ']' {
		j++
	}
	for j < n && p[j] != ']' {
		j++
	}
	if j >= n {
		return nil, i, nil
	}
	stuff, err := classStuff(p, i, j)
	if err != nil {
		return nil, 0, err
	}
	next := j + 1
	switch {
	case len(stuff) == 0:
		return classNone, next, nil
	case len(stuff) == 1 && stuff[0].r == '!' && !stuff[0].esc:
		return classAll, next, nil
	}
	cls := &runeClass{}
	if stuff[0].r == '!' && !stuff[0].esc {
		cls.neg = true
		stuff = stuff[1:]
	}
	// A leading '^' or '[' is escaped by fnmatch, so it stays literal,
	// which is what treating every classRune as a literal does.
	cls.ranges, err = classRanges(stuff)
	if err != nil {
		return nil, 0, err
	}
	return cls, next, nil
}

// classRune is one character of fnmatch's translated class body; esc
// marks a character fnmatch escaped (so a '-' is literal, not a range).
type classRune struct {
	r   rune
	esc bool
}

// classStuff computes the class body p[i:j] as fnmatch.translate does:
// split at range hyphens into chunks, drop reversed ranges, and escape the
// hyphens that remain literal.
func classStuff(p []rune, i, j int) ([]classRune, error) {
	body := p[i:j]
	if !containsRune(body, '-') {
		return literalRunes(body), nil
	}
	var chunks [][]rune
	k := i + 1
	if p[i] == '!' {
		k = i + 2
	}
	for {
		k = indexRune(p, '-', k, j)
		if k < 0 {
			break
		}
		chunks = append(chunks, append([]rune(nil), p[i:k]...))
		i = k + 1
		k += 3
	}
	if last := p[i:j]; len(last) > 0 {
		chunks = append(chunks, append([]rune(nil), last...))
	} else {
		chunks[len(chunks)-1] = append(chunks[len(chunks)-1], '-')
	}
	for k := len(chunks) - 1; k > 0; k-- {
		prev, cur := chunks[k-1], chunks[k]
		if len(prev) == 0 || len(cur) == 0 {
			// CPython indexes an empty chunk here and raises IndexError.
			return nil, fmt.Errorf("malformed character range in [%s]", string(body))
		}
		if prev[len(prev)-1] > cur[0] {
			chunks[k-1] = append(prev[:len(prev)-1:len(prev)-1], cur[1:]...)
			chunks = append(chunks[:k], chunks[k+1:]...)
		}
	}
	var out []classRune
	for ci, ch := range chunks {
		if ci > 0 {
			out = append(out, classRune{r: '-'})
		}
		out = append(out, literalRunes(ch)...)
	}
	return out, nil
}

func literalRunes(rs []rune) []classRune {
	out := make([]classRune, len(rs))
	for i, r := range rs {
		out[i] = classRune{r: r, esc: r == '-'}
	}
	return out
}

// classRanges parses a class body as CPython's sre parser would: an
// unescaped '-' between two characters forms a range.
func classRanges(s []classRune) ([][2]rune, error) {
	var out [][2]rune
	for i := 0; i < len(s); i++ {
		lo := s[i].r
		if i+2 < len(s) && s[i+1].r == '-' && !s[i+1].esc {
			hi := s[i+2].r
			if hi < lo {
				return nil, fmt.Errorf("bad character range %c-%c", lo, hi)
			}
			out = append(out, [2]rune{lo, hi})
			i += 2
			continue
		}
		out = append(out, [2]rune{lo, lo})
	}
	return out, nil
}

func containsRune(rs []rune, r rune) bool { return indexRune(rs, r, 0, len(rs)) >= 0 }

func indexRune(rs []rune, r rune, from, to int) int {
	for k := from; k < to; k++ {
		if rs[k] == r {
			return k
		}
	}
	return -1
}

// match reports whether s matches the whole pattern.
func (g *glob) match(s string) bool { return g.matchCase(s, false) }

// matchLower matches strings.ToLower(s) without building it, for
// subdict_match's lowercased comparisons.
func (g *glob) matchLower(s string) bool { return g.matchCase(s, true) }

func (g *glob) matchCase(s string, lower bool) bool {
	if g.isLit {
		if !lower {
			return s == g.literal
		}
		return equalLower(s, g.literal)
	}
	items := g.items
	pi, si := 0, 0
	starPi, starSi := -1, 0
	for {
		if pi < len(items) && items[pi].kind == gStar {
			if pi == len(items)-1 {
				return true // a trailing star takes the rest
			}
			starPi, starSi = pi, si
			pi++
			continue
		}
		if si >= len(s) {
			return pi == len(items)
		}
		r, size := utf8.DecodeRuneInString(s[si:])
		if lower {
			r = unicode.ToLower(r)
		}
		if pi < len(items) && items[pi].matches(r) {
			pi++
			si += size
			continue
		}
		if starPi < 0 {
			return false
		}
		// Let the last star swallow one more character and retry.
		_, size = utf8.DecodeRuneInString(s[starSi:])
		starSi += size
		pi, si = starPi+1, starSi
	}
}

// equalLower reports whether strings.ToLower(s) == low.
func equalLower(s, low string) bool {
	for _, r := range s {
		l, size := utf8.DecodeRuneInString(low)
		if size == 0 || unicode.ToLower(r) != l {
			return false
		}
		low = low[size:]
	}
	return low == ""
}

func (it *globItem) matches(r rune) bool {
	switch it.kind {
	case gLit:
		return it.r == r
	case gAny:
		return true
	case gClass:
		return it.cls.has(r)
	}
	return false
}
