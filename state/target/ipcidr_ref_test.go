package target

import (
	"os"
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
)

// testdata/ipcidr_ref.json holds Salt 3006's ipcidr_match results
// (salt/matchers/ipcidr_match.py with salt.utils.network.in_subnet, run
// on CPython 3.11) for targets against grain sets; "invalid" is the []
// Salt returns for a target that is neither an address nor a network.
func TestIPCIDRAgainstSalt(t *testing.T) {
	f, err := os.Open("testdata/ipcidr_ref.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	v, err := ordered.DecodeJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	doc := v.(*ordered.Map)
	grains := doc.Value("grains").([]any)
	for _, r := range doc.Value("rows").([]any) {
		row := r.([]any)
		g, tgt, want := grains[row[0].(int)].(*ordered.Map), row[1].(string), row[2]
		c, err := Compile(tgt, IPCIDR, Options{})
		if want == "invalid" {
			if err == nil {
				t.Errorf("Compile(%q) succeeded, Salt rejects it", tgt)
			}
			continue
		}
		if err != nil {
			t.Errorf("Compile(%q): %v", tgt, err)
			continue
		}
		if got := c.Match(&Minion{Grains: g}); got != want {
			t.Errorf("ipcidr %q on grains %d = %v, Salt says %v", tgt, row[0], got, want)
		}
	}
}
