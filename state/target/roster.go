package target

import (
	"fmt"
	"strings"
)

// MatchID matches a bare id, as salt-ssh filters its roster
// (salt/utils/roster_matcher.py): glob is fnmatch, pcre is re.match, list
// is membership in the comma-split string or the list, and nodegroup
// looks the name up in opts.ListNodegroups (Salt's ssh_list_nodegroups),
// an unknown name matching nothing. Other kinds need grains and return an
// error wrapping ErrUnsupported, where Salt's roster returns no targets.
func MatchID(expr any, kind Kind, id string, opts Options) (bool, error) {
	switch kind {
	case Glob, PCRE:
		m, err := Compile(expr, kind, opts)
		if err != nil {
			return false, err
		}
		return m.Match(&Minion{ID: id}), nil
	case List:
		return inTargetSet(expr, id)
	case Nodegroup:
		name, ok := expr.(string)
		if !ok {
			return false, fmt.Errorf("match roster nodegroup: got %T, want a string", expr)
		}
		group, ok := opts.ListNodegroups[name]
		if !ok {
			return false, nil
		}
		return inTargetSet(group, id)
	}
	return false, fmt.Errorf("match roster target of type %s: %w", kind, ErrUnsupported)
}

// inTargetSet is roster_matcher's _tgt_set followed by a membership test.
func inTargetSet(tgt any, id string) (bool, error) {
	switch x := tgt.(type) {
	case string:
		for _, e := range strings.Split(x, ",") {
			if e == id {
				return true, nil
			}
		}
		return false, nil
	case []string:
		for _, e := range x {
			if e == id {
				return true, nil
			}
		}
		return false, nil
	case []any:
		for _, e := range x {
			if s, ok := e.(string); ok && s == id {
				return true, nil
			}
		}
		return false, nil
	}
	return false, fmt.Errorf("match roster list: got %T, want a string or a list", tgt)
}
