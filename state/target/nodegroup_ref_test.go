package target

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// testdata/nodegroup_ref.json holds random loop-free nodegroup tables
// with the expansion of g0 by Salt 3006's own
// salt.utils.minions.nodegroup_comp.
func TestExpandNodegroupAgainstSalt(t *testing.T) {
	b, err := os.ReadFile("testdata/nodegroup_ref.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases [][2]json.RawMessage
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		var groups map[string]any
		var want []string
		if err := json.Unmarshal(c[0], &groups); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(c[1], &want); err != nil {
			t.Fatal(err)
		}
		got, err := expandNodegroup("g0", groups, nil, true)
		if err != nil {
			t.Errorf("case %d: %v", i, err)
			continue
		}
		if want == nil {
			want = []string{}
		}
		if got == nil {
			got = []string{}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("case %d %v (-salt +brine):\n%s", i, groups, diff)
		}
	}
}
