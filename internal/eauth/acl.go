package eauth

import (
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/pki"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/state/target"
)

// FillAuthList is CkMinions.fill_auth_list (salt/utils/minions.py): the
// ACL entries a user gets from a backend's section, in configuration
// order: every entry whose key matches name (salt.utils.stringutils
// .expr_match: an fnmatch glob, else a full-match regex), every group%
// entry of a group the user is in, and "*" — which, unless permissive
// (permissive_acl), is only for users no other entry named.
func FillAuthList(b *BackendConfig, name string, groups []string, permissive bool) []any {
	if b == nil {
		return nil
	}
	var out []any
	matched := false
	var star []any
	for _, e := range b.Entries {
		switch {
		case e.Match == "*" && !permissive:
			star = append(star, e.ACL...)
		case e.Group:
			if slices.Contains(groups, strings.TrimRight(e.Match, "%")) {
				out = append(out, e.ACL...)
			}
		case pki.ExprMatch(name, e.Match):
			matched = true
			out = append(out, e.ACL...)
		}
	}
	if !permissive && !matched {
		out = append(out, star...)
	}
	return out
}

// Perms is what salt-api's /login reports as perms
// (salt/netapi/__init__.py sum_permissions then sorted_permissions): the
// user's own entry (by exact name), "*", and the entries of the user's
// groups, de-duplicated, strings sorted first, then the rest by repr.
func Perms(b *BackendConfig, name string, groups []string) []any {
	if b == nil {
		return []any{}
	}
	var all []any
	for _, want := range []string{name, "*"} {
		for _, e := range b.Entries {
			if !e.Group && e.Match == want {
				all = append(all, e.ACL...)
			}
		}
	}
	for _, e := range b.Entries {
		if e.Group && slices.Contains(groups, strings.TrimRight(e.Match, "%")) {
			all = append(all, e.ACL...)
		}
	}
	var strs []string
	var rest []any
	for _, p := range all {
		if s, ok := p.(string); ok {
			if !slices.Contains(strs, s) {
				strs = append(strs, s)
			}
			continue
		}
		if !slices.ContainsFunc(rest, func(x any) bool { return ordered.Equal(x, p) }) {
			rest = append(rest, p)
		}
	}
	slices.Sort(strs)
	slices.SortStableFunc(rest, func(a, b any) int { return strings.Compare(py.Repr(a), py.Repr(b)) })
	out := make([]any, 0, len(strs)+len(rest))
	for _, s := range strs {
		out = append(out, s)
	}
	return append(out, rest...)
}

// TargetFunc expands a target of the given tgt_type to the minions the
// master expects it to reach (CkMinions.check_minions); like Salt's, it
// answers no minions for a target it cannot evaluate.
type TargetFunc func(tgt any, tgtType string) []string

// regexCache keeps compiled ACL patterns: the same few patterns are
// checked for every request.
var regexCache sync.Map // pattern -> target.Matcher or error

// matchCheck is CkMinions.match_check: re.match(regex, fun) for each of
// funs, all or nothing. A pattern that is not a string or not a valid
// regular expression matches nothing (Salt logs it and answers False).
func matchCheck(regex any, funs ...string) bool {
	pat, ok := regex.(string)
	if !ok || len(funs) == 0 {
		return false
	}
	var m target.Matcher
	if c, ok := regexCache.Load(pat); ok {
		if m, ok = c.(target.Matcher); !ok {
			return false
		}
	} else {
		var err error
		m, err = target.Compile(pat, target.PCRE, target.Options{})
		if err != nil {
			regexCache.Store(pat, err)
			return false
		}
		regexCache.Store(pat, m)
	}
	for _, f := range funs {
		if !m.Match(&target.Minion{ID: f}) {
			return false
		}
	}
	return true
}

// Publish is one publication to authorize: the function (or the list of
// a compound command), its arguments (one list per function), the target
// and the minions it expands to.
type Publish struct {
	Funs    []string
	Args    [][]any
	Tgt     any
	TgtType string
	Minions []string
}

// AuthCheck is CkMinions.auth_check without expanded matching: whether
// authList allows the publication. A string entry is a function regex
// allowed on every minion; a one-key mapping {target: [functions]}
// allows the functions when every targeted minion is also matched by
// target as a compound expression (CkMinions.validate_tgt, so a target
// that reaches no minion passes here), with argument restrictions
// ({fun: {args: [...], kwargs: {...}}}) checked against the arguments.
// Functions in whitelist are always allowed (the master passes
// saltutil.find_job).
func AuthCheck(authList []any, p Publish, whitelist []string, expand TargetFunc) bool {
	for num, fun := range p.Funs {
		if slices.Contains(whitelist, fun) {
			return true
		}
		for _, ind := range authList {
			switch x := ind.(type) {
			case string:
				if matchCheck(x, fun) {
					return true
				}
			case *ordered.Map:
				valid, funs, ok := oneKey(x)
				if !ok || !validateTgt(valid, p.Minions, expand) {
					continue
				}
				var funArgs []any
				if num < len(p.Args) {
					funArgs = p.Args[num]
				}
				args, kwargs := splitKwarg(funArgs)
				if funCheck(funs, fun, args, kwargs) {
					return true
				}
			}
		}
	}
	return false
}

// splitKwarg takes the trailing {"__kwarg__": True, ...} of a publish's
// arguments off as the keyword arguments, as auth_check does.
func splitKwarg(args []any) ([]any, *ordered.Map) {
	if len(args) == 0 {
		return args, nil
	}
	kw, ok := args[len(args)-1].(*ordered.Map)
	if !ok || !kw.Has("__kwarg__") {
		return args, nil
	}
	return args[:len(args)-1], kw
}

// validateTgt is CkMinions.validate_tgt with the minions given: every
// targeted minion is among those valid matches as a compound target.
func validateTgt(valid any, minions []string, expand TargetFunc) bool {
	allowed := expand(valid, "compound")
	for _, id := range minions {
		if !slices.Contains(allowed, id) {
			return false
		}
	}
	return true
}

// funCheck is CkMinions.__fun_check: fun matches one of the conditions, a
// regex string or a one-key mapping {regex: argument conditions}.
func funCheck(valid any, fun string, args []any, kwargs *ordered.Map) bool {
	for _, c := range asList(valid) {
		switch x := c.(type) {
		case string:
			if matchCheck(x, fun) {
				return true
			}
		case *ordered.Map:
			if k, conds, ok := oneKey(x); ok && matchCheck(k, fun) && argsCheck(conds, args, kwargs) {
				return true
			}
		}
	}
	return false
}

// argsCheck is CkMinions.__args_check: one of the conditions
// {args: [regex...], kwargs: {name: regex}} holds. Positional patterns
// match str() of the argument at their index (null allows any value but
// the argument must be there); every named keyword must be given and
// match.
func argsCheck(valid any, args []any, kwargs *ordered.Map) bool {
	for _, c := range asList(valid) {
		cond, ok := c.(*ordered.Map)
		if !ok {
			continue
		}
		if positionalOK(cond.Value("args"), args) && keywordsOK(cond.Value("kwargs"), kwargs) {
			return true
		}
	}
	return false
}

// oneKey is the key and value of a one-key mapping; ACL mappings with
// more keys are malformed and skipped, as Salt skips them.
func oneKey(m *ordered.Map) (key, value any, ok bool) {
	if m.Len() != 1 {
		return nil, nil, false
	}
	k := m.Keys()[0]
	return k, m.Value(k), true
}

// asList is Salt's "if not isinstance(valid, list): valid = [valid]".
func asList(v any) []any {
	if l, ok := v.([]any); ok {
		return l
	}
	return []any{v}
}

func positionalOK(v any, args []any) bool {
	if v == nil {
		return true
	}
	pats, ok := v.([]any)
	if !ok {
		// Salt iterates whatever it is given; a mapping iterates its
		// keys, a string its characters. Anything else is a TypeError
		// that auth_check turns into a refusal.
		pats = iterate(v)
		if pats == nil {
			return false
		}
	}
	for i, p := range pats {
		if i >= len(args) {
			return false
		}
		if p == nil {
			continue
		}
		if !matchCheck(p, py.Str(args[i])) {
			return false
		}
	}
	return true
}

func keywordsOK(v any, kwargs *ordered.Map) bool {
	if v == nil {
		return true
	}
	pats, ok := v.(*ordered.Map)
	if !ok {
		return false // .items() of a non-mapping: a TypeError, a refusal
	}
	good := true
	pats.Range(func(k, p any) bool {
		if kwargs == nil || !kwargs.Has(k) {
			good = false
			return false
		}
		if p != nil && !matchCheck(p, py.Str(kwargs.Value(k))) {
			good = false
		}
		return good
	})
	return good
}

func iterate(v any) []any {
	switch x := v.(type) {
	case *ordered.Map:
		return x.Keys()
	case string:
		out := []any{}
		for _, r := range x {
			out = append(out, string(r))
		}
		return out
	}
	return nil
}

// ErrCheckSyntax is spec_check's answer to a runner or wheel function
// that is not module.function.
//
//lint:ignore ST1005 Salt's message (salt/utils/minions.py spec_check)
var ErrCheckSyntax = errors.New("A command invocation error occurred: Check syntax.")

// SpecCheck is CkMinions.spec_check for form "runner" or "wheel": whether
// authList allows fun. "@<form>", "@<form>s" and "@<module>" allow
// everything of the form or module; {"@<form>": [...]} lists full
// function regexes and {"@<module>": [...]} function-name regexes, with
// argument conditions checked against low's "arg" and "kwarg" keys (low
// is the call's kwarg mapping, as ClearFuncs.runner passes it).
func SpecCheck(authList []any, fun string, low *ordered.Map, form string) (bool, error) {
	if len(authList) == 0 {
		return false, nil
	}
	mod, name, ok := strings.Cut(fun, ".")
	if !ok || strings.Contains(name, ".") {
		return false, ErrCheckSyntax
	}
	var args []any
	var kwargs *ordered.Map
	if low != nil {
		args, _ = low.Value("arg").([]any)
		kwargs, _ = low.Value("kwarg").(*ordered.Map)
	}
	for _, ind := range authList {
		switch x := ind.(type) {
		case string:
			if at, ok := strings.CutPrefix(x, "@"); ok && (at == mod || at == form || at == form+"s") {
				return true, nil
			}
		case *ordered.Map:
			k, funs, ok := oneKey(x)
			valid, _ := k.(string)
			at, isAt := strings.CutPrefix(valid, "@")
			if !ok || !isAt {
				continue
			}
			if at == mod && funCheck(funs, name, args, kwargs) {
				return true, nil
			}
			if (at == form || at == form+"s") && funCheck(funs, fun, args, kwargs) {
				return true, nil
			}
		}
	}
	return false, nil
}
