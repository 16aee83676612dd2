// Package target is Brine's targeting engine: Salt's matchers with
// Salt's semantics, shared by salt-ssh roster filtering, top file
// matching (state and pillar) and the master.
//
// # API
//
//	m, err := target.Compile("G@os:Debian and web*", target.Compound, target.Options{})
//	ok := m.Match(&target.Minion{ID: "web1", Grains: grains, Pillar: pillar})
//
//	ok, err := target.Match(expr, kind, minion, opts)   // compile and match once
//	ok, err := target.MatchID(expr, kind, id, opts)      // salt-ssh roster: ids only
//
// Options.Delimiter is the grain/pillar key delimiter, Options.Nodegroups
// the master's nodegroups (for N@ and the nodegroup kind) and
// Options.ListNodegroups the master's ssh_list_nodegroups (for MatchID);
// OptionsFromConfig fills the last two from a Salt opts map.
//
// Compile once and match many: a compiled Matcher is immutable and safe
// for concurrent use. Kind values are Salt's tgt_type names (glob, pcre,
// list, grain, grain_pcre, pillar, pillar_pcre, pillar_exact, ipcidr,
// nodegroup, compound, compound_pillar_exact); ParseKind maps a name.
//
// # Semantics
//
// Each matcher follows the Salt 3006 source it is named after:
//
//   - glob (salt/matchers/glob_match.py): Python's fnmatch.fnmatch on the
//     id, case-sensitive, with CPython's translation of [...], [!...] and
//     ranges (checked against CPython in testdata/fnmatch.jsonl).
//   - pcre (pcre_match.py): re.match, anchored at the start only. Python
//     syntax RE2 lacks (lookaround, backreferences, conditionals, atomic
//     groups, possessive quantifiers, (?x)) is a *PatternError wrapping
//     ErrUnsupportedRegex; \Z, {,n}, \uXXXX, octal escapes, (?#...), $
//     before a final newline and Unicode \d \w \s are translated, and
//     CPython's own syntax errors are errors (checked against CPython in
//     testdata/pyre.jsonl). \b stays ASCII.
//   - list (list_match.py): a comma string or a list.
//   - grain, grain_pcre, pillar, pillar_pcre, pillar_exact: subdict_match
//     from salt/utils/data.py, including its quirks: values and patterns
//     are compared as lowercased str() (so True is "true" and a pcre \D
//     becomes \d), lists match when any element does, a dict matches a
//     key name, "*:" searches one level down, keys like "1" find integer
//     keys (yamlify_arg), numeric keys index lists and dicts inside lists,
//     and nested dict matching always splits on ":".
//   - ipcidr (ipcidr_match.py): an address must be in the ipv4/ipv6
//     grain as Python prints it; a network (prefix, netmask or hostmask,
//     no host bits) must contain one of the grain's addresses.
//   - nodegroup (nodegroup_match.py, minions.nodegroup_comp): the group
//     expanded as a compound expression, nested N@ references included.
//     Salt's quirks are kept: a group without nested references is spliced
//     into a compound expression without parentheses, and a plain word
//     list becomes L@a,b (or E@a,b when a word holds a regex character).
//   - compound (compound_match.py): words joined by and/or/not and
//     parentheses with Python's precedence (not > and > or); a "not"
//     after a target implies "and"; G@ P@ I@ J@ L@ S@ E@ N@ prefixes,
//     with an optional one-character delimiter for G P I J ("G;@a;b"),
//     bare words are globs. Options.Delimiter does not apply inside a
//     compound expression, as in Salt.
//
// # Errors
//
// Salt logs a malformed target and matches nothing; Brine rejects it at
// Compile so the caller can report it. A malformed compound expression
// is a *SyntaxError pointing at the offending word (unbalanced
// parentheses, a dangling operator, two targets without an operator, an
// unknown X@ engine, a bad pattern); nodegroup trouble is a
// *NodegroupError wrapping ErrUnknownNodegroup or ErrNodegroupLoop; a bad
// pcre (E@) regular expression, CIDR (S@) or a grain/pillar expression
// without its delimiter is a *PatternError. One exception follows Salt:
// an invalid regular expression in a grain_pcre or pillar_pcre value only
// fails to match, because subdict_match logs it and tries the other ways
// of splitting the expression. Python regex syntax that RE2 cannot run
// wraps ErrUnsupportedRegex wherever it appears; the range matcher (R@)
// and the data matcher wrap ErrUnsupported. For valid expressions Match
// returns what Salt would; testdata holds reference results computed by
// CPython (fnmatch, re, eval of compound strings) and by Salt's own
// matchers, subdict_match and nodegroup_comp, loaded from a Salt checkout
// by testdata/gen/gen.py, which regenerates them.
//
// # Salt's answers to malformed compound expressions
//
// Where the caller must answer exactly as Salt does rather than report
// the error, CompoundValue (the minion's match.compound) and
// CompoundMinions (the master's CkMinions.check_minions) evaluate the
// expression as Salt does: word by word, then Python's eval() of the
// text Salt builds, quirks included ("( )" is an empty tuple, "S@bad" an
// empty list so "not S@bad" is True, an unknown X@ engine is a glob,
// an unknown nodegroup is dropped, "x or y ( z )" is x when x is true,
// and the master closes an unclosed "("). An expression Salt logs as
// invalid is an *EvalError. testdata/compound_malformed.json holds
// Salt's own answers, from testdata/gen/malformed.py, which runs Salt.
//
// Not modelled: the master's "greedy" mode for minions without cached
// grains outside CompoundMinions (the caller decides which minions to
// offer), and a few Unicode
// corner cases of Python's str.lower() and regex classes.
package target
