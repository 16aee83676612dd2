package ordered

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMapOrderAndDelete(t *testing.T) {
	m := FromPairs("b", 1, "a", 2, true, 3)
	m.Set("b", 10) // existing key keeps its place
	m.Delete("a")
	m.Set("a", 4) // re-added key goes last
	got, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"b":10,"True":3,"a":4}`; string(got) != want {
		t.Errorf("json = %s, want %s", got, want)
	}
	if m.Value(int64(7)) != nil || !m.Has(true) {
		t.Errorf("lookup by key kind failed")
	}
}

func TestDecodeJSONKeepsOrder(t *testing.T) {
	v, err := DecodeJSON(strings.NewReader(`{"z":[1,2.5,{"y":null,"x":"s"}],"a":true}`))
	if err != nil {
		t.Fatal(err)
	}
	m := v.(*Map)
	if diff := cmp.Diff([]string{"z", "a"}, m.StringKeys()); diff != "" {
		t.Error(diff)
	}
	inner := m.Value("z").([]any)
	if inner[0] != 1 || inner[1] != 2.5 {
		t.Errorf("numbers = %#v", inner)
	}
	if diff := cmp.Diff([]string{"y", "x"}, inner[2].(*Map).StringKeys()); diff != "" {
		t.Error(diff)
	}
}
