package match

import (
	"context"
	"io"
	"log/slog"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
)

// TestCompoundMalformedAgainstSalt runs match.compound on the rows of
// state/target/testdata/compound_malformed.json, which records Salt
// 3006's own match.compound (run by testdata/gen/malformed.py there) on
// each of three minions for malformed targets: an empty group is (),
// a bad subnet [], "not" of one True, unbalanced parentheses, a bad
// E@ regex, "and" at the start and "not not" False, an unknown engine
// letter a glob, an unknown nodegroup dropped.
func TestCompoundMalformedAgainstSalt(t *testing.T) {
	f, err := os.Open("../../target/testdata/compound_malformed.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	v, err := ordered.DecodeJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	doc := v.(*ordered.Map)
	minions := doc.Value("minions").(*ordered.Map)
	r := modules.NewRegistry()
	Register(r)
	n := 0
	for _, row := range doc.Value("rows").([]any) {
		row := row.(*ordered.Map)
		expr := row.Value("expr").(string)
		row.Value("match_compound").(*ordered.Map).Range(func(k, want any) bool {
			id := k.(string)
			m := minions.Value(id).(*ordered.Map)
			env := (&modules.Env{
				Pillar:   m.Value("pillar").(*ordered.Map),
				Opts:     ordered.FromPairs("id", id, "nodegroups", doc.Value("nodegroups")),
				Registry: r,
				Log:      slog.New(slog.NewTextHandler(io.Discard, nil)),
				Context:  map[string]any{},
			}).WithGrains(m.Value("grains").(*ordered.Map))
			got, err := env.Run(context.Background(), "match.compound", []any{expr}, ordered.New())
			if err != nil {
				t.Errorf("match.compound %q on %s: %v", expr, id, err)
				return true
			}
			if d := cmp.Diff(want.(*ordered.Map).Value("value"), got); d != "" {
				t.Errorf("match.compound %q on %s (-salt +brine):\n%s", expr, id, d)
			}
			n++
			return true
		})
	}
	if n < 1500 {
		t.Fatalf("only %d calls compared", n)
	}
}
