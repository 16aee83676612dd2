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
