package target

import (
	"bufio"
	"encoding/json"
	"os"
	"testing"
)

// testdata/subdict_ref.jsonl holds [mode, delimiter, expr, result] rows
// computed by Salt 3006's own subdict_match (salt/utils/data.py, with
// yamlify_arg from salt/utils/args.py) on the grains of testGrains, for
// random expressions over its keys and values. A compile error must be a
// row Salt answers False (no delimiter, or a regex Salt logs as invalid).
func TestSubdictAgainstSalt(t *testing.T) {
	f, err := os.Open("testdata/subdict_ref.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	kinds := map[string]Kind{"glob": Grain, "regex": GrainPCRE, "exact": PillarExact}
	g := testGrains()
	m := &Minion{ID: "web1", Grains: g, Pillar: g}
	sc := bufio.NewScanner(f)
	n, hits := 0, 0
	for sc.Scan() {
		var row [4]any
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatal(err)
		}
		mode, delim, expr := row[0].(string), row[1].(string), row[2].(string)
		want, _ := row[3].(bool)
		c, err := Compile(expr, kinds[mode], Options{Delimiter: delim})
		if err != nil {
			if want {
				t.Errorf("%s %q (delimiter %q): %v, Salt matches", mode, expr, delim, err)
			}
			continue
		}
		if got := c.Match(m); got != want {
			t.Errorf("%s %q (delimiter %q) = %v, Salt says %v", mode, expr, delim, got, want)
		}
		n++
		if want {
			hits++
		}
	}
	if n < 10000 || hits < 100 {
		t.Fatalf("only %d rows (%d matches) compared", n, hits)
	}
}
