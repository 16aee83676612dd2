package roster

import (
	"fmt"

	"github.com/brinesalt/brine/state/target"
)

// Target types accepted by Targets (Salt's tgt_type names for roster
// matching, salt/utils/roster_matcher.py).
const (
	TgtGlob      = "glob"
	TgtPCRE      = "pcre"
	TgtList      = "list"
	TgtNodegroup = "nodegroup"
)

// compileMatcher builds an ID matcher with state/target's roster
// semantics: glob is fnmatch, pcre is re.match (anchored at the start
// only), list a comma-separated set of IDs, nodegroup a list from
// ssh_list_nodegroups. Other types need grains, which a flat roster does
// not have.
func compileMatcher(tgt, tgtType string, nodegroups map[string]any) (func(string) bool, error) {
	kind, err := target.ParseKind(tgtType)
	if err != nil {
		return nil, fmt.Errorf("%w %q", ErrUnsupportedTargetType, tgtType)
	}
	opts := target.Options{ListNodegroups: nodegroups}
	switch kind {
	case target.Glob, target.PCRE:
		m, err := target.Compile(tgt, kind, opts)
		if err != nil {
			return nil, fmt.Errorf("compile %s target: %w", kind, err)
		}
		return func(id string) bool { return m.Match(&target.Minion{ID: id}) }, nil
	case target.List, target.Nodegroup:
		return func(id string) bool {
			ok, err := target.MatchID(tgt, kind, id, opts)
			return err == nil && ok
		}, nil
	}
	return nil, fmt.Errorf("%w %q (roster targets support glob, pcre, list and nodegroup)", ErrUnsupportedTargetType, tgtType)
}
