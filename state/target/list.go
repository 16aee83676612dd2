package target

import (
	"fmt"
	"strings"
)

// listMatcher is Salt's list matcher (salt/matchers/list_match.py). For a
// comma string it tests `",id," in tgt`, a prefix "id,", a suffix ",id"
// or equality, which for ids without commas is membership in the split
// list; for a list it tests membership.
type listMatcher struct {
	str   string
	isStr bool
	set   map[string]struct{}
}

func compileList(expr any) (Matcher, error) {
	switch x := expr.(type) {
	case string:
		l := &listMatcher{str: x, isStr: true, set: map[string]struct{}{}}
		for _, e := range strings.Split(x, ",") {
			l.set[e] = struct{}{}
		}
		return l, nil
	case []string:
		l := &listMatcher{set: map[string]struct{}{}}
		for _, e := range x {
			l.set[e] = struct{}{}
		}
		return l, nil
	case []any:
		l := &listMatcher{set: map[string]struct{}{}}
		for _, e := range x {
			// Only strings can equal a minion id in Python.
			if s, ok := e.(string); ok {
				l.set[s] = struct{}{}
			}
		}
		return l, nil
	}
	return nil, fmt.Errorf("compile list target: got %T, want a string or a list", expr)
}

func (l *listMatcher) Match(m *Minion) bool {
	id := m.ID
	if !l.isStr {
		_, a := l.set[id]
		_, b := l.set[","+id+","]
		return a || b
	}
	if !strings.Contains(id, ",") {
		_, ok := l.set[id]
		return ok
	}
	return strings.Contains(l.str, ","+id+",") || strings.HasPrefix(l.str, id+",") ||
		strings.HasSuffix(l.str, ","+id) || l.str == id
}
