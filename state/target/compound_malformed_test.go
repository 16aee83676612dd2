package target

import (
	"errors"
	"os"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
)

// malformedRef is testdata/compound_malformed.json, Salt 3006's answers
// (testdata/gen/malformed.py, running Salt itself) for malformed and
// odd compound targets: match.compound's return on each minion, and the
// minions the master's CkMinions.check_minions expects.
type malformedRef struct {
	minions    map[string]*Minion
	cached     map[string]bool
	nodegroups map[string]any
	rows       []*ordered.Map
}

func loadMalformedRef(t *testing.T) malformedRef {
	t.Helper()
	f, err := os.Open("testdata/compound_malformed.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	v, err := ordered.DecodeJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	doc := v.(*ordered.Map)
	ref := malformedRef{minions: map[string]*Minion{}, cached: map[string]bool{}, nodegroups: stringKeyed(doc.Value("nodegroups"))}
	doc.Value("minions").(*ordered.Map).Range(func(k, v any) bool {
		m := v.(*ordered.Map)
		id := k.(string)
		ref.minions[id] = &Minion{ID: id, Grains: m.Value("grains").(*ordered.Map), Pillar: m.Value("pillar").(*ordered.Map)}
		ref.cached[id] = m.Value("cached").(bool)
		return true
	})
	for _, r := range doc.Value("rows").([]any) {
		ref.rows = append(ref.rows, r.(*ordered.Map))
	}
	if len(ref.rows) < 500 {
		t.Fatalf("only %d rows", len(ref.rows))
	}
	return ref
}

// TestCompoundValueAgainstSalt: match.compound answers True, False, []
// or () as Salt's compound matcher and eval() do: "( )" is an empty
// tuple, "S@bad" an empty list, "not S@bad" True, "x or y ( z )" True
// when x is, an unknown nodegroup is dropped, a bad regex in E@ raises
// (so False) while one in P@ just does not match.
func TestCompoundValueAgainstSalt(t *testing.T) {
	ref := loadMalformedRef(t)
	opts := Options{Nodegroups: ref.nodegroups}
	for _, r := range ref.rows {
		expr := r.Value("expr").(string)
		r.Value("match_compound").(*ordered.Map).Range(func(k, v any) bool {
			id := k.(string)
			want := v.(*ordered.Map).Value("value")
			got, _, err := CompoundValue(expr, ref.minions[id], opts)
			if errors.Is(err, ErrUnsupported) {
				t.Errorf("%q on %s: %v; Salt answers %v", expr, id, err, want)
				return true
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("match.compound %q on %s (-salt +brine):\n%s (err %v)", expr, id, d, err)
			}
			return true
		})
	}
}

// TestCompoundMinionsAgainstSalt: the master expects the minions Salt's
// check_minions does: "( a" is closed for it, an unknown nodegroup is
// dropped, "S@bad" reaches nobody, a grain or ipcidr word keeps minions
// without cached data, and an expression eval() rejects reaches nobody.
func TestCompoundMinionsAgainstSalt(t *testing.T) {
	ref := loadMalformedRef(t)
	var all []string
	for id := range ref.minions {
		all = append(all, id)
	}
	slices.Sort(all)
	data := func(id string) (*Minion, bool) { return ref.minions[id], ref.cached[id] }
	opts := Options{Nodegroups: ref.nodegroups}
	for _, r := range ref.rows {
		expr := r.Value("expr").(string)
		var want []string
		for _, id := range r.Value("check_minions").([]any) {
			want = append(want, id.(string))
		}
		got, _, err := CompoundMinions(expr, all, data, false, opts)
		if errors.Is(err, ErrUnsupported) {
			t.Errorf("%q: %v; Salt answers %v", expr, err, want)
			continue
		}
		if d := cmp.Diff(want, got, cmp.Transformer("nil", func(s []string) []string {
			if s == nil {
				return []string{}
			}
			return s
		})); d != "" {
			t.Errorf("check_minions %q (-salt +brine):\n%s (err %v)", expr, d, err)
		}
	}
}
