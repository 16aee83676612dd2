package target

import (
	"bufio"
	"encoding/json"
	"os"
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
)

// testdata/compound_ref.jsonl holds [expr, minion id, result] rows
// computed by Salt 3006's own minion-side compound matcher
// (salt/matchers/compound_match.py with the glob, pcre, list, grain,
// grain_pcre, pillar, pillar_pcre and ipcidr matchers, parse_target and
// nodegroup_comp) for random expressions over the minions and nodegroups
// below.
func TestCompoundAgainstSalt(t *testing.T) {
	opts := Options{Nodegroups: map[string]any{
		"webs": "web*", "both": "web1 or db1", "nested": "N@webs and G@os:Debian", "ids": []any{"db1", "web12"},
		"ids_re": []any{"web[12]", "db1"}, "deep": []any{"N@nested", "or", "N@ids"},
	}}
	minions := map[string]*Minion{
		"web1": {ID: "web1",
			Grains: ordered.FromPairs("os", "Debian", "ipv4", []any{"10.0.0.5"}, "ipv6", []any{"::1"},
				"roles", []any{"web", "Cache"}, "env", ordered.FromPairs("name", "prod")),
			Pillar: ordered.FromPairs("role", "web", "app", ordered.FromPairs("ports", []any{80, 443}))},
		"db1": {ID: "db1",
			Grains: ordered.FromPairs("os", "Ubuntu", "ipv4", []any{"10.0.1.7"}, "ipv6", []any{"2001:db8::7"},
				"roles", []any{"db"}, "env", ordered.FromPairs("name", "stage")),
			Pillar: ordered.FromPairs("role", "db")},
		"web12": {ID: "web12",
			Grains: ordered.FromPairs("os", "Debian", "ipv4", []any{"10.0.0.12"}, "roles", []any{}, "env", ordered.New()),
			Pillar: ordered.New()},
	}
	f, err := os.Open("testdata/compound_ref.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		var row [3]any
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatal(err)
		}
		expr, id := row[0].(string), row[1].(string)
		want, _ := row[2].(bool)
		c, err := Compile(expr, Compound, opts)
		if err != nil {
			if want {
				t.Errorf("Compile(%q): %v; Salt matches %s", expr, err, id)
			}
			continue
		}
		if got := c.Match(minions[id]); got != want {
			t.Errorf("%q on %s = %v, Salt says %v", expr, id, got, want)
		}
		n++
	}
	if n < 2000 {
		t.Fatalf("only %d rows compared", n)
	}
}
