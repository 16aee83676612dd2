package ordered

// DeepCopy copies a value of the model recursively, as Python's deepcopy
// does for YAML data: maps and lists are new, scalars are shared, and a
// map or list reached twice (a YAML alias) is copied once and stays
// shared in the copy, as deepcopy's memo keeps it, so copying an aliased
// document costs its written size rather than its expanded one.
func DeepCopy(v any) any {
	switch v.(type) {
	case *Map, []any:
		return (&copier{maps: map[*Map]*Map{}, lists: map[listID][]any{}}).copy(v)
	}
	return v
}

// listID identifies a list by its backing array and length; slices of
// one array with different lengths are different lists.
type listID struct {
	first *any
	n     int
}

type copier struct {
	maps  map[*Map]*Map
	lists map[listID][]any
}

func (c *copier) copy(v any) any {
	switch x := v.(type) {
	case *Map:
		if x == nil {
			return New()
		}
		if m, ok := c.maps[x]; ok {
			return m
		}
		m := NewSize(x.Len())
		c.maps[x] = m
		x.Range(func(k, val any) bool { m.Set(k, c.copy(val)); return true })
		return m
	case []any:
		if len(x) == 0 {
			return []any{}
		}
		id := listID{&x[0], len(x)}
		if l, ok := c.lists[id]; ok {
			return l
		}
		l := make([]any, len(x))
		c.lists[id] = l
		for i, e := range x {
			l[i] = c.copy(e)
		}
		return l
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
