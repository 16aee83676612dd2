package target

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
)

// Kind is a target type, spelled as Salt's tgt_type.
type Kind string

// The target types. Their values are Salt's tgt_type names, as given to
// `salt --tgt-type` or `- match:` in a top file.
const (
	Glob                Kind = "glob"
	PCRE                Kind = "pcre"
	List                Kind = "list"
	Grain               Kind = "grain"
	GrainPCRE           Kind = "grain_pcre"
	Pillar              Kind = "pillar"
	PillarPCRE          Kind = "pillar_pcre"
	PillarExact         Kind = "pillar_exact"
	IPCIDR              Kind = "ipcidr"
	Nodegroup           Kind = "nodegroup"
	Compound            Kind = "compound"
	CompoundPillarExact Kind = "compound_pillar_exact"
	// Range and Data exist in Salt but are not implemented; Compile
	// returns an error wrapping ErrUnsupported for them.
	Range Kind = "range"
	Data  Kind = "data"
)

// Kinds lists the target types Compile accepts.
var Kinds = []Kind{Glob, PCRE, List, Grain, GrainPCRE, Pillar, PillarPCRE, PillarExact, IPCIDR, Nodegroup, Compound, CompoundPillarExact}

// ParseKind maps a tgt_type name to a Kind; "" is glob, as in Salt.
func ParseKind(s string) (Kind, error) {
	if s == "" {
		return Glob, nil
	}
	for _, k := range append(Kinds, Range, Data) {
		if string(k) == s {
			return k, nil
		}
	}
	return "", fmt.Errorf("parse target type %q: unknown target type", s)
}

// DefaultDelimiter separates grain and pillar keys (Salt's
// DEFAULT_TARGET_DELIM).
const DefaultDelimiter = ":"

// Minion is what a target is matched against: the minion id, its grains
// and its pillar. Nil maps are empty.
type Minion struct {
	ID     string
	Grains *ordered.Map
	Pillar *ordered.Map
}

// Options are the settings a target is compiled with.
type Options struct {
	// Delimiter separates keys in grain, grain_pcre, pillar, pillar_pcre
	// and pillar_exact targets; "" means ":". Compound expressions do not
	// use it: they take a per-word delimiter (G;@key;value) or ":", as
	// Salt does.
	Delimiter string
	// Nodegroups is the master's `nodegroups:` setting: each value is a
	// compound expression string or a list of words.
	Nodegroups map[string]any
	// ListNodegroups is the master's `ssh_list_nodegroups:` setting, the
	// list-only groups salt-ssh's roster matching uses for MatchID.
	ListNodegroups map[string]any
	// RejectBadRegex makes a grain or pillar PCRE target (-P, --pillar-pcre,
	// P@ and J@ in a compound) whose value pattern is no valid regular
	// expression in any of the ways the expression splits into key and
	// value an error. Without it such a target only never matches, as
	// Salt's matchers log "Invalid regex" and move on
	// (salt/utils/data.py subdict_match); salt-ssh, which matches on the
	// controller, sets it to fail as it does for a bad -E pattern.
	RejectBadRegex bool
}

func (o Options) delimiter() string {
	if o.Delimiter == "" {
		return DefaultDelimiter
	}
	return o.Delimiter
}

// Matcher is a compiled target. It is safe for concurrent use.
type Matcher interface {
	// Match reports whether the minion is targeted.
	Match(m *Minion) bool
}

// Compile compiles expr, a string or (for list and compound) a []any or
// []string of words, as a target of the given kind.
func Compile(expr any, kind Kind, opts Options) (Matcher, error) {
	switch kind {
	case Compound, CompoundPillarExact:
		return compileCompound(expr, kind == CompoundPillarExact, opts)
	case List:
		return compileList(expr)
	case Nodegroup:
		name, ok := expr.(string)
		if !ok {
			return nil, fmt.Errorf("compile nodegroup target: got %T, want a string", expr)
		}
		return compileNodegroup(name, opts)
	case Range, Data:
		return nil, fmt.Errorf("compile %s target: %w", kind, ErrUnsupported)
	}
	s, ok := expr.(string)
	if !ok {
		return nil, fmt.Errorf("compile %s target: got %T, want a string", kind, expr)
	}
	switch kind {
	case Glob:
		return compileGlobMatcher(s)
	case PCRE:
		return compilePCREMatcher(s)
	case Grain, GrainPCRE, Pillar, PillarPCRE, PillarExact:
		return compileSubdictMatcher(s, kind, opts.delimiter(), opts.RejectBadRegex)
	case IPCIDR:
		c, err := compileIPCIDR(s)
		if err != nil {
			return nil, err
		}
		return ipcidrMatcher{c}, nil
	}
	return nil, fmt.Errorf("compile target: unknown target type %q", kind)
}

// Match compiles expr and matches it against m in one step.
func Match(expr any, kind Kind, m *Minion, opts Options) (bool, error) {
	c, err := Compile(expr, kind, opts)
	if err != nil {
		return false, err
	}
	return c.Match(m), nil
}

type globMatcher struct{ g *glob }

func (g globMatcher) Match(m *Minion) bool { return g.g.match(m.ID) }

func compileGlobMatcher(pat string) (Matcher, error) {
	g, err := compileGlob(pat)
	if err != nil {
		return nil, &PatternError{Kind: Glob, Pattern: pat, Msg: "invalid glob", Err: err}
	}
	return globMatcher{g}, nil
}

type pcreMatcher struct{ re *regexp.Regexp }

func (p pcreMatcher) Match(m *Minion) bool { return p.re.MatchString(m.ID) }

func compilePCREMatcher(pat string) (Matcher, error) {
	re, err := compilePyRegex(pat)
	if err != nil {
		err.(*PatternError).Kind = PCRE
		return nil, err
	}
	return pcreMatcher{re}, nil
}

type ipcidrMatcher struct{ c *ipcidr }

func (i ipcidrMatcher) Match(m *Minion) bool { return i.c.match(m.Grains) }

// subdictMatcher is the grain, grain_pcre, pillar, pillar_pcre and
// pillar_exact matchers (salt/matchers/*_match.py), all built on
// salt.utils.data.subdict_match.
type subdictMatcher struct {
	pillar bool
	sd     *subdict
}

func (s subdictMatcher) Match(m *Minion) bool {
	data := m.Grains
	if s.pillar {
		data = m.Pillar
	}
	return s.sd.match(data)
}

func compileSubdictMatcher(expr string, kind Kind, delim string, rejectBad bool) (Matcher, error) {
	if !strings.Contains(expr, delim) {
		// Salt logs "Got insufficient arguments for grains match
		// statement" and matches nothing.
		return nil, &PatternError{Kind: kind, Pattern: expr, Msg: fmt.Sprintf("no delimiter %q between key and value", delim)}
	}
	mode := modeGlob
	switch kind {
	case GrainPCRE, PillarPCRE:
		mode = modeRegex
	case PillarExact:
		mode = modeExact
	}
	c := newSubdictCompiler(mode)
	sd := c.subdict(expr, delim)
	// A pattern Python rejects just never matches, as Salt logs it and
	// moves on; one Python accepts but RE2 cannot run is an error.
	if c.unsupported != nil {
		return nil, &PatternError{Kind: kind, Pattern: expr, Msg: "unsupported value pattern", Err: c.unsupported}
	}
	if rejectBad && c.invalid != nil && !c.valid {
		return nil, &PatternError{Kind: kind, Pattern: expr, Msg: "invalid value pattern " + c.invalid.Error()}
	}
	return subdictMatcher{pillar: strings.HasPrefix(string(kind), "pillar"), sd: sd}, nil
}

// OptionsFromConfig reads the targeting settings from a Salt
// configuration map (master or minion opts): nodegroups and
// ssh_list_nodegroups. Values of other shapes are ignored.
func OptionsFromConfig(opts *ordered.Map) Options {
	return Options{
		Nodegroups:     stringKeyed(opts.Value("nodegroups")),
		ListNodegroups: stringKeyed(opts.Value("ssh_list_nodegroups")),
	}
}

func stringKeyed(v any) map[string]any {
	m, ok := v.(*ordered.Map)
	if !ok {
		return nil
	}
	out := make(map[string]any, m.Len())
	m.Range(func(k, v any) bool {
		out[ordered.KeyString(k)] = v
		return true
	})
	return out
}
