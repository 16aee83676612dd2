// Package match is Salt's match execution module (salt/modules/match.py):
// match.compound, glob, pcre, list, grain, grain_pcre, pillar,
// pillar_pcre, ipcidr and data test the running minion against a target;
// filter_by, search_by and ifelse pick values by target. The matching is
// state/target's.
//
// As in Salt, a malformed target matches nothing (the error is logged)
// rather than failing the call; match.compound returns exactly what
// Salt's does for a malformed expression, which can be True or []. Where Brine cannot evaluate a valid
// target (a regular expression RE2 cannot run) the call fails instead of
// guessing.
package match

import (
	"context"
	"errors"
	"net/netip"
	"strings"

	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/target"
)

func req(name string) modules.Param { return modules.Param{Name: name} }

func opt(name string, def any) modules.Param {
	return modules.Param{Name: name, Default: def, Optional: true}
}

func params(p ...modules.Param) modules.Spec { return modules.Spec{Params: p} }

func init() { Register(modules.Default) }

// Register adds the match module's functions to r; init registers them in
// modules.Default, tests in a fresh registry.
func Register(r *modules.Registry) {
	reg := func(name, doc string, spec modules.Spec, fn modules.Func) {
		r.Register(modules.Function{Name: "match." + name, Doc: doc, Spec: spec, Fn: fn})
	}
	for _, name := range []string{"compound", "glob", "pcre", "list"} {
		reg(name, docs[name], params(req("tgt"), opt("minion_id", nil)), call(name))
	}
	for _, name := range []string{"grain", "grain_pcre", "pillar", "pillar_pcre"} {
		reg(name, docs[name], params(req("tgt"), opt("delimiter", target.DefaultDelimiter)), call(name))
	}
	reg("ipcidr", docs["ipcidr"], params(req("tgt")), call("ipcidr"))
	reg("data", docs["data"], params(req("tgt")), call("data"))
	reg("filter_by", docs["filter_by"], params(req("lookup"), opt("tgt_type", "compound"), opt("minion_id", nil),
		opt("merge", nil), opt("merge_lists", false), opt("default", "default")), filterBy)
	reg("search_by", docs["search_by"], params(req("lookup"), opt("tgt_type", "compound"), opt("minion_id", nil)), searchBy)
	reg("ifelse", docs["ifelse"], modules.Spec{VarArgs: true, VarKw: true}, ifelse)
}

var docs = map[string]string{
	"compound":    "Return True if the minion ID matches the given compound target.",
	"glob":        "Return True if the minion ID matches the given glob target.",
	"pcre":        "Return True if the minion ID matches the given pcre target.",
	"list":        "Return True if the minion ID matches the given list target.",
	"grain":       "Return True if the minion matches the given grain target; delimiter separates nested keys.",
	"grain_pcre":  "Return True if the minion matches the given grain_pcre target; delimiter separates nested keys.",
	"pillar":      "Return True if the minion matches the given pillar target; delimiter separates nested keys.",
	"pillar_pcre": "Return True if the minion matches the given pillar_pcre target; delimiter separates nested keys.",
	"ipcidr":      "Return True if the minion matches the given ipcidr target.",
	"data":        "Return True if the minion matches the given data target (data.getval key:glob).",
	"filter_by":   "Return the value of the first key of lookup that, as a target of tgt_type, matches this minion; else lookup[default].",
	"search_by":   "Return the keys of lookup whose list of targets has one matching this minion, or None.",
	"ifelse":      "Evaluate (target, value) pairs and return the first matching value, else the last argument.",
}

// call adapts a matcher function to the registry's bound call.
func call(name string) modules.Func {
	return func(ctx context.Context, c *modules.Call) (any, error) {
		args := []any{c.Arg("tgt")}
		for _, p := range c.Fun.Spec.Params[1:] {
			args = append(args, c.Arg(p.Name))
		}
		return funcs[name](ctx, c.Env, args)
	}
}

// matchFunc is one of match.py's matcher functions called with Python
// positional arguments, as filter_by calls them: (tgt) or (tgt, second),
// where second is minion_id or delimiter depending on the function.
type matchFunc func(ctx context.Context, env *modules.Env, args []any) (any, error)

// funcs are the matcher functions by their Salt names.
var funcs = map[string]matchFunc{
	"compound":    compound,
	"glob":        idMatcher(target.Glob),
	"pcre":        idMatcher(target.PCRE),
	"list":        idMatcher(target.List),
	"grain":       dataMatcher(target.Grain),
	"grain_pcre":  dataMatcher(target.GrainPCRE),
	"pillar":      dataMatcher(target.Pillar),
	"pillar_pcre": dataMatcher(target.PillarPCRE),
	"ipcidr":      oneArg("ipcidr", ipcidr),
	"data":        oneArg("data", data),
}

// idMatcher is match.compound/glob/pcre/list(tgt, minion_id=None).
func idMatcher(kind target.Kind) matchFunc {
	return func(_ context.Context, env *modules.Env, args []any) (any, error) {
		var minionID any
		if len(args) > 1 {
			minionID = args[1]
		}
		m := minion(env, minionID, kind == target.Glob)
		tgt := args[0]
		switch kind {
		case target.Glob, target.PCRE:
			if _, ok := tgt.(string); !ok {
				return false, nil // fnmatch and re.match raise; match.py returns False
			}
		case target.List:
			if keys, ok := tgt.(*ordered.Map); ok {
				tgt = keys.Keys() // `id in dict` tests the keys
			}
		}
		return evaluate(env, tgt, kind, m, target.OptionsFromConfig(env.Opts))
	}
}

// compound is match.compound(tgt, minion_id=None): what Salt's
// compound matcher returns, malformed targets included — True, False,
// or [] where Salt's eval() yields an empty list or tuple ("S@bad",
// "( )"); a target it logs as invalid is False (target.CompoundValue).
func compound(_ context.Context, env *modules.Env, args []any) (any, error) {
	var minionID any
	if len(args) > 1 {
		minionID = args[1]
	}
	v, dropped, err := target.CompoundValue(args[0], minion(env, minionID, false), target.OptionsFromConfig(env.Opts))
	if env.Log != nil {
		for _, d := range dropped {
			env.Log.Error("failed nodegroup expansion", logattr.Err, d.Error())
		}
	}
	if err != nil {
		if errors.Is(err, target.ErrUnsupported) {
			return nil, modules.Errorf("match compound: %w", err)
		}
		if env.Log != nil {
			env.Log.Error("invalid compound target", logattr.Err, err.Error())
		}
	}
	return v, nil
}

// dataMatcher is match.grain/grain_pcre/pillar/pillar_pcre(tgt,
// delimiter=":").
func dataMatcher(kind target.Kind) matchFunc {
	return func(_ context.Context, env *modules.Env, args []any) (any, error) {
		delim := any(target.DefaultDelimiter)
		if len(args) > 1 {
			delim = args[1]
		}
		tgt, ok := args[0].(string)
		d, dok := delim.(string)
		if !ok || !dok || d == "" {
			// `delimiter not in tgt` or str.split("") raises; match.py
			// returns False.
			return false, nil
		}
		return evaluate(env, tgt, kind, minion(env, nil, false), target.Options{Delimiter: d})
	}
}

// evaluate compiles and matches; a target Salt would reject matches
// nothing, one Brine cannot run is an error.
func evaluate(env *modules.Env, tgt any, kind target.Kind, m *target.Minion, opts target.Options) (any, error) {
	c, err := target.Compile(tgt, kind, opts)
	if err != nil {
		if errors.Is(err, target.ErrUnsupportedRegex) {
			return nil, modules.Errorf("match %s: %w", kind, err)
		}
		if env.Log != nil {
			env.Log.Error("invalid target", "tgt_type", string(kind), logattr.Err, err.Error())
		}
		return false, nil
	}
	return c.Match(m), nil
}

// minion builds the target minion: the given id (str() of a non-string)
// or, when it is empty, this minion's id from the options.
func minion(env *modules.Env, minionID any, globStyle bool) *target.Minion {
	id := ""
	switch x := minionID.(type) {
	case nil:
	case string:
		id = x
	default:
		id = ordered.KeyString(x)
	}
	if id == "" {
		if globStyle && env.Opts.Has("minion_id") {
			id = optString(env.Opts.Value("minion_id"))
		} else {
			id = optString(env.Opts.Value("id"))
		}
	}
	return &target.Minion{ID: id, Grains: env.Grains(), Pillar: env.Pillar}
}

func optString(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	if v == nil {
		return ""
	}
	return ordered.KeyString(v)
}

// oneArg wraps a function of one parameter, failing as Python does when
// filter_by passes a second one.
func oneArg(name string, fn func(ctx context.Context, env *modules.Env, tgt any) (any, error)) matchFunc {
	return func(ctx context.Context, env *modules.Env, args []any) (any, error) {
		if len(args) > 1 {
			return nil, modules.Errorf("TypeError: %s() takes 1 positional argument but %d were given", name, len(args))
		}
		return fn(ctx, env, args[0])
	}
}

// ipcidr is match.ipcidr: an invalid target returns [] as
// ipcidr_match.py does, not False.
func ipcidr(_ context.Context, env *modules.Env, tgt any) (any, error) {
	if n, ok := tgt.(int); ok {
		// ipaddress.ip_address accepts integers.
		tgt = intAddr(n)
	}
	s, ok := tgt.(string)
	if !ok {
		return []any{}, nil
	}
	c, err := target.Compile(s, target.IPCIDR, target.Options{})
	if err != nil {
		if env.Log != nil {
			env.Log.Error("invalid IP/CIDR target", "tgt", s)
		}
		return []any{}, nil
	}
	return c.Match(minion(env, nil, false)), nil
}

func intAddr(n int) any {
	if n < 0 {
		return nil
	}
	if n < 1<<32 {
		return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}).String()
	}
	var b [16]byte
	for i := 15; i >= 8; i-- {
		b[i] = byte(n)
		n >>= 8
	}
	return netip.AddrFrom16(b).String()
}

// data is match.data (salt/matchers/data_match.py): "key:glob" against
// the value data.getval returns from the minion's datastore.
func data(ctx context.Context, env *modules.Env, tgt any) (any, error) {
	s, ok := tgt.(string)
	if !ok {
		return false, nil
	}
	comps := strings.Split(s, ":")
	if len(comps) < 2 {
		return false, nil
	}
	if env.Registry == nil {
		return false, nil
	}
	val, err := env.Run(ctx, "data.getval", []any{comps[0]}, nil)
	if err != nil {
		if env.Log != nil {
			env.Log.Error("match.data: data.getval failed", logattr.Err, err.Error())
		}
		return false, nil
	}
	return dataMatches(val, comps[1])
}

func dataMatches(val any, pat string) (any, error) {
	switch x := val.(type) {
	case nil:
		return false, nil
	case []any:
		for _, member := range x {
			if fnmatch(strings.ToLower(py.Str(member)), strings.ToLower(pat)) {
				return true, nil
			}
		}
		return false, nil
	case *ordered.Map:
		return x.Has(pat), nil
	case string:
		return fnmatch(x, pat), nil
	}
	return false, nil // fnmatch on a non-string raises; match.py returns False
}

// fnmatch is Python's fnmatch.fnmatch(name, pat).
func fnmatch(name, pat string) bool {
	ok, err := target.Match(pat, target.Glob, &target.Minion{ID: name}, target.Options{})
	return err == nil && ok
}
