package ordered

import "testing"

func TestEqualAndDeepCopy(t *testing.T) {
	a := FromPairs("x", []any{1, 2.0, true}, "y", FromPairs("z", "s"))
	b := FromPairs("y", FromPairs("z", "s"), "x", []any{1.0, 2, 1})
	if !Equal(a, b) {
		t.Error("maps equal in Python judged different")
	}
	for _, c := range [][2]any{{1, "1"}, {[]any{1}, []any{1, 2}}, {FromPairs("a", 1), FromPairs("b", 1)}, {nil, false}} {
		if Equal(c[0], c[1]) {
			t.Errorf("Equal(%v, %v) = true", c[0], c[1])
		}
	}
	c := DeepCopy(a).(*Map)
	c.Value("y").(*Map).Set("z", "changed")
	c.Value("x").([]any)[0] = 9
	if a.Value("y").(*Map).Value("z") != "s" || a.Value("x").([]any)[0] != 1 {
		t.Error("DeepCopy shares nested values")
	}
}

// A map or list reached twice is copied once and stays shared, as
// Python's deepcopy memo keeps it; the old walk copied it per path, so a
// nine-deep alias bomb became 9^9 values and ran out of memory.
func TestDeepCopyKeepsSharedValuesShared(t *testing.T) {
	leaf := FromPairs("k", "v")
	v := any([]any{leaf})
	for i := 0; i < 40; i++ { // 2^40 paths: only a shared copy finishes
		v = []any{v, v}
	}
	top := FromPairs("a", v, "b", leaf)
	c := DeepCopy(top).(*Map)
	if c == top || c.Value("b") == leaf {
		t.Fatal("not copied")
	}
	l := c.Value("a").([]any)
	if &l[0].([]any)[0] != &l[1].([]any)[0] {
		t.Error("shared list copied twice")
	}
	for i := 0; i < 40; i++ {
		l = l[0].([]any)
	}
	if l[0].(*Map) != c.Value("b") {
		t.Error("the map under a and b is no longer one map")
	}
}
