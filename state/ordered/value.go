package ordered

// DeepCopy copies a value of the model recursively, as Python's deepcopy
// does for YAML data: maps and lists are new, scalars are shared.
func DeepCopy(v any) any {
	switch x := v.(type) {
	case *Map:
		c := New()
		x.Range(func(k, val any) bool { c.Set(k, DeepCopy(val)); return true })
		return c
	case []any:
		c := make([]any, len(x))
		for i, e := range x {
			c[i] = DeepCopy(e)
		}
		return c
	}
	return v
}

// Equal is Python's == on the value model: maps regardless of key order,
// lists element by element, and numbers across int, float and bool
// (1 == 1.0 == True).
func Equal(a, b any) bool {
	switch x := a.(type) {
	case *Map:
		y, ok := b.(*Map)
		if !ok || x.Len() != y.Len() {
			return false
		}
		eq := true
		x.Range(func(k, v any) bool {
			w, ok := y.Get(k)
			eq = ok && Equal(v, w)
			return eq
		})
		return eq
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !Equal(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	if fa, ok := Number(a); ok {
		fb, ok := Number(b)
		return ok && fa == fb
	}
	return a == b
}

// Number returns v as a float when Python would treat it as a number
// (int, float and bool).
func Number(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case float64:
		return x, true
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}
