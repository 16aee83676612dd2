package target

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/brinesalt/brine/internal/py"
)

// nodegroupWords returns the words of a nodegroup definition: a string is
// split on whitespace, a list is taken word by word.
func nodegroupWords(name string, def any) ([]string, error) {
	switch x := def.(type) {
	case string:
		w, _ := pyFields(x)
		return w, nil
	case []string:
		return x, nil
	case []any:
		out := make([]string, len(x))
		for i, e := range x {
			out[i] = py.Str(e)
		}
		return out, nil
	}
	return nil, &NodegroupError{Name: name, Chain: []string{name}, Msg: fmt.Sprintf("definition is %T, neither a string nor a list", def)}
}

// expandNodegroup is salt.utils.minions.nodegroup_comp: it replaces N@
// references by the referenced groups in parentheses. Where Salt logs an
// unknown or looping nodegroup and drops the reference, Brine returns a
// *NodegroupError.
//
// Quirks kept from Salt: a top-level group with no nested N@ comes back
// without parentheses, so "N@g and x" with g = "a or b" reads as
// "a or b and x"; and a group of plain words with no operator, wildcard
// or engine prefix becomes "L@w1,w2", or "E@w1,w2" when a word holds one
// of ( [ { \ ? } ] ).
func expandNodegroup(name string, groups map[string]any, chain []string, first bool) ([]string, error) {
	return expandNodegroupMode(name, groups, chain, first, nil)
}

// expandNodegroupSalt is nodegroup_comp exactly: an unknown, looping or
// malformed nodegroup expands to nothing, wherever it is referenced, and
// the reason is added to dropped (Salt logs it).
func expandNodegroupSalt(name string, groups map[string]any, dropped *[]error) ([]string, error) {
	return expandNodegroupMode(name, groups, nil, true, dropped)
}

// expandNodegroupMode is expandNodegroup; with a non-nil dropped, a
// group that cannot be expanded is dropped rather than an error.
func expandNodegroupMode(name string, groups map[string]any, chain []string, first bool, dropped *[]error) (words []string, err error) {
	if dropped != nil {
		defer func() {
			var ne *NodegroupError
			if errors.As(err, &ne) && ne.Err != errNodegroupTooBig {
				*dropped = append(*dropped, err)
				words, err = nil, nil
			}
		}()
	}
	chain = append(chain, name)
	for _, seen := range chain[:len(chain)-1] {
		if seen == name {
			return nil, &NodegroupError{Name: name, Chain: append([]string(nil), chain...), Msg: "refers to itself", Err: ErrNodegroupLoop}
		}
	}
	def, ok := groups[name]
	if !ok {
		return nil, &NodegroupError{Name: name, Chain: append([]string(nil), chain...), Msg: "not defined in nodegroups", Err: ErrUnknownNodegroup}
	}
	words, err = nodegroupWords(name, def)
	if err != nil {
		return nil, err
	}
	var ret []string
	expanded := false
	for _, w := range words {
		switch {
		case isOper(w):
			ret = append(ret, w)
		case len(w) >= 3 && strings.HasPrefix(w, "N@"):
			expanded = true
			sub, err := expandNodegroupMode(w[2:], groups, chain, false, dropped)
			if err != nil {
				return nil, err
			}
			ret = append(ret, sub...)
			if len(ret) > maxNodegroupWords {
				return nil, &NodegroupError{Name: name, Chain: append([]string(nil), chain...),
					Msg: fmt.Sprintf("expands to more than %d words", maxNodegroupWords), Err: errNodegroupTooBig}
			}
		default:
			ret = append(ret, w)
		}
	}
	if len(ret) > 0 {
		ret = append(append([]string{"("}, ret...), ")")
	}
	if expanded || !first {
		if !first {
			if joined := nodegroupShorthand(words); joined != nil {
				return joined, nil
			}
		}
		return ret, nil
	}
	if joined := nodegroupShorthand(words); joined != nil {
		return joined, nil
	}
	return words, nil
}

// errNodegroupTooBig marks an expansion past maxNodegroupWords, which
// Brine refuses even where Salt would go on.
var errNodegroupTooBig = errors.New("nodegroup expansion too large")

// maxNodegroupWords bounds an expansion: nodegroups that reference each
// other several times over grow exponentially.
const maxNodegroupWords = 100000

var engineWordRe = regexp.MustCompile(`^[A-Z]@`)

// nodegroupShorthand is _nodegroup_regex in salt/utils/minions.py.
func nodegroupShorthand(words []string) []string {
	for _, w := range words {
		if isOper(w) || strings.Contains(w, "*") || engineWordRe.MatchString(w) {
			return nil
		}
	}
	for _, w := range words {
		if strings.ContainsAny(w, `([{\?}])`) {
			return []string{"E@" + strings.Join(words, ",")}
		}
	}
	return []string{"L@" + strings.Join(words, ",")}
}

func isOper(w string) bool {
	switch w {
	case "and", "or", "not", "(", ")":
		return true
	}
	return false
}

// compileNodegroup is the nodegroup matcher (salt/matchers/nodegroup_match.py
// and CkMinions._check_nodegroup_minions): the expanded group as a
// compound expression.
func compileNodegroup(name string, opts Options) (Matcher, error) {
	words, err := expandNodegroup(name, opts.Nodegroups, nil, true)
	if err != nil {
		return nil, fmt.Errorf("compile nodegroup target: %w", err)
	}
	m, err := compileCompoundIn(words, false, opts, name)
	if err != nil {
		return nil, fmt.Errorf("compile nodegroup %q: %w", name, err)
	}
	return m, nil
}
