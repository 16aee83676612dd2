package roster

import (
	"fmt"
	"regexp"
	"strings"
)

// This file holds the roster matchers of salt/utils/roster_matcher.py. It
// stands in for state/target until that package lands; the semantics are
// the same: glob is Python's fnmatch.fnmatchcase, pcre is re.match
// (anchored at the start only) in RE2 syntax, list is a comma-separated
// set of exact IDs, nodegroup a list from ssh_list_nodegroups.

// Target types accepted by Targets (Salt's tgt_type names).
const (
	TgtGlob      = "glob"
	TgtPCRE      = "pcre"
	TgtList      = "list"
	TgtNodegroup = "nodegroup"
)

func compileMatcher(tgt, tgtType string, nodegroups map[string][]string) (func(string) bool, error) {
	switch tgtType {
	case "", TgtGlob:
		re, err := regexp.Compile(globToRegexp(tgt))
		if err != nil {
			return nil, fmt.Errorf("compile glob %q: %w", tgt, err)
		}
		return re.MatchString, nil
	case TgtPCRE:
		re, err := regexp.Compile(`^(?:` + tgt + `)`)
		if err != nil {
			return nil, fmt.Errorf("compile pcre %q: %w", tgt, err)
		}
		return re.MatchString, nil
	case TgtList:
		return setMatcher(strings.Split(tgt, ",")), nil
	case TgtNodegroup:
		return setMatcher(nodegroups[tgt]), nil
	}
	return nil, fmt.Errorf("%w %q (roster targets support glob, pcre, list and nodegroup)", ErrUnsupportedTargetType, tgtType)
}

func setMatcher(ids []string) func(string) bool {
	set := make(map[string]bool, len(ids))
	for _, id := range ids {
		set[id] = true
	}
	return func(id string) bool { return set[id] }
}

// globToRegexp translates an fnmatch pattern as Python's
// fnmatch.translate does: * and ? match any character including "/" and
// newline, [seq] and [!seq] are classes where a leading ] is literal, and
// a [ without a closing ] is literal. Ranges whose ends are reversed
// match nothing (Python 3.9+).
func globToRegexp(pat string) string {
	var b strings.Builder
	b.WriteString(`(?s:`)
	rs := []rune(pat)
	for i := 0; i < len(rs); i++ {
		switch c := rs[i]; c {
		case '*':
			for i+1 < len(rs) && rs[i+1] == '*' {
				i++
			}
			b.WriteString(`.*`)
		case '?':
			b.WriteString(`.`)
		case '[':
			cls, end, ok := globClass(rs, i)
			if !ok {
				b.WriteString(`\[`)
				continue
			}
			b.WriteString(cls)
			i = end
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString(`)\z`)
	return b.String()
}

// globClass reads the class starting at rs[i] == '['; it returns the RE2
// class, the index of the closing ']' and whether there was one.
func globClass(rs []rune, i int) (string, int, bool) {
	j := i + 1
	if j < len(rs) && rs[j] == '!' {
		j++
	}
	if j < len(rs) && rs[j] == ']' {
		j++
	}
	for j < len(rs) && rs[j] != ']' {
		j++
	}
	if j >= len(rs) {
		return "", 0, false
	}
	body := rs[i+1 : j]
	neg := false
	if len(body) > 0 && body[0] == '!' {
		neg, body = true, body[1:]
	}
	var items []string
	for k := 0; k < len(body); k++ {
		lo := body[k]
		if k+2 < len(body) && body[k+1] == '-' {
			hi := body[k+2]
			k += 2
			if lo > hi {
				continue // Python drops reversed ranges
			}
			items = append(items, classRune(lo)+"-"+classRune(hi))
			continue
		}
		items = append(items, classRune(lo))
	}
	if len(items) == 0 {
		if neg {
			return `.`, j, true // [!] with only reversed ranges: any char
		}
		return `[^\x00-\x{10FFFF}]`, j, true // matches nothing
	}
	if neg {
		return `[^` + strings.Join(items, "") + `]`, j, true
	}
	return `[` + strings.Join(items, "") + `]`, j, true
}

func classRune(r rune) string {
	if strings.ContainsRune(`\]^-[`, r) {
		return `\` + string(r)
	}
	return string(r)
}
