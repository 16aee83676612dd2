package roster

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/brinesalt/brine/state/target"
)

// matcher compiles an ID matcher for tgt under tgtType with the
// nodegroups of c.
//
// For tgt_type nodegroup (-N) Salt's roster matching looks the name up in
// ssh_list_nodegroups only (salt/utils/roster_matcher.py
// ret_nodegroup_minions), lists of IDs. Brine does that first; a name
// that is not there but is in the master's nodegroups is evaluated as
// the compound expression it is (nested N@ included) over roster IDs —
// an extension, since salt-ssh ignores nodegroups outside the cache
// roster. Such a group may only use ID matchers (globs, L@, E@, N@); a
// group that needs grains or pillar (G@, P@, I@, J@, S@) is refused with
// ErrUnsupportedTargetType rather than silently matching nothing.
func (c Config) matcher(tgt, tgtType string) (func(string) bool, error) {
	if tgtType != TgtNodegroup {
		return compileMatcher(tgt, tgtType, c.ListNodegroups)
	}
	if _, ok := c.ListNodegroups[tgt]; ok || c.Nodegroups[tgt] == nil {
		return compileMatcher(tgt, tgtType, c.ListNodegroups)
	}
	if w := grainWord(tgt, c.Nodegroups, map[string]bool{}); w != "" {
		return nil, fmt.Errorf("%w: nodegroup %q uses %q, which needs minion data (only the cache roster has it)",
			ErrUnsupportedTargetType, tgt, w)
	}
	m, err := target.Compile(tgt, target.Nodegroup, target.Options{Nodegroups: c.Nodegroups})
	if err != nil {
		return nil, fmt.Errorf("compile nodegroup target: %w", err)
	}
	return func(id string) bool { return m.Match(&target.Minion{ID: id}) }, nil
}

// dataWordRe matches compound words that need grains, pillar or
// addresses: G@, P@, I@, J@, S@, also with a one-character delimiter
// (G;@…).
var dataWordRe = regexp.MustCompile(`^[GPIJS].?@`)

// grainWord returns the first word of nodegroup name (or of a group it
// refers to) that cannot be matched on an ID alone, or "".
func grainWord(name string, groups map[string]any, seen map[string]bool) string {
	if seen[name] {
		return ""
	}
	seen[name] = true
	for _, w := range groupWords(groups[name]) {
		w = strings.TrimLeft(w, "(")
		if dataWordRe.MatchString(w) {
			return w
		}
		if ref, ok := strings.CutPrefix(w, "N@"); ok {
			if inner := grainWord(strings.TrimRight(ref, ")"), groups, seen); inner != "" {
				return inner
			}
		}
	}
	return ""
}

// groupWords splits a nodegroup definition, a string or a list of words.
func groupWords(def any) []string {
	switch x := def.(type) {
	case string:
		return strings.Fields(x)
	case []string:
		return x
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, strings.Fields(s)...)
			}
		}
		return out
	}
	return nil
}
