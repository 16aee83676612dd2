// Package ordered holds Brine's value model: the insertion-ordered map that
// Salt's YAML loader (an OrderedDict), Jinja's dict and Python 3 dicts all
// behave as, and helpers to move such values through JSON without losing
// key order.
//
// Values throughout Brine's state system are one of: nil, bool, int,
// float64, string, []any or *Map. Map keys are scalars (string, int,
// float64, bool or nil) because Salt's YAML allows `True:` or `1:` as keys
// and reports them later (salt/state.py: "ID 'True' is not formed as a
// string, but is a bool").
package ordered

import "github.com/brinesalt/brine/internal/py"

// Map is a map that remembers the order in which keys were first set.
// The zero value is an empty map ready to use. A Map is not safe for
// concurrent mutation.
type Map struct {
	keys []any
	vals map[any]any
}

// New returns an empty Map.
func New() *Map { return &Map{} }

// FromPairs builds a Map from alternating key, value arguments; it panics
// on an odd count, which is a programmer error.
func FromPairs(kv ...any) *Map {
	if len(kv)%2 != 0 {
		panic("ordered.FromPairs: odd argument count")
	}
	m := NewSize(len(kv) / 2)
	for i := 0; i < len(kv); i += 2 {
		m.Set(kv[i], kv[i+1])
	}
	return m
}

// Len reports the number of keys.
func (m *Map) Len() int {
	if m == nil {
		return 0
	}
	return len(m.keys)
}

// Get returns the value stored under k.
func (m *Map) Get(k any) (any, bool) {
	if m == nil || m.vals == nil {
		return nil, false
	}
	v, ok := m.vals[normKey(k)]
	return v, ok
}

// Value returns the value under k, or nil when absent.
func (m *Map) Value(k any) any {
	v, _ := m.Get(k)
	return v
}

// Has reports whether k is present.
func (m *Map) Has(k any) bool {
	_, ok := m.Get(k)
	return ok
}

// Set stores v under k. A new key goes to the end; an existing key keeps
// its position, as in a Python dict.
func (m *Map) Set(k, v any) {
	k = normKey(k)
	if m.vals == nil {
		m.vals = make(map[any]any)
	}
	if _, ok := m.vals[k]; !ok {
		m.keys = append(m.keys, k)
	}
	m.vals[k] = v
}

// Delete removes k, keeping the order of the other keys.
func (m *Map) Delete(k any) {
	if m == nil || m.vals == nil {
		return
	}
	k = normKey(k)
	if _, ok := m.vals[k]; !ok {
		return
	}
	delete(m.vals, k)
	for i, x := range m.keys {
		if x == k {
			m.keys = append(m.keys[:i:i], m.keys[i+1:]...)
			break
		}
	}
}

// Keys returns the keys in insertion order. The slice is a copy.
func (m *Map) Keys() []any {
	if m == nil {
		return nil
	}
	return append([]any(nil), m.keys...)
}

// StringKeys returns the keys formatted as Python's str() would.
func (m *Map) StringKeys() []string {
	out := make([]string, 0, m.Len())
	for _, k := range m.Keys() {
		out = append(out, KeyString(k))
	}
	return out
}

// Range calls fn for each entry in order until fn returns false.
func (m *Map) Range(fn func(k, v any) bool) {
	if m == nil {
		return
	}
	for _, k := range m.keys {
		if !fn(k, m.vals[k]) {
			return
		}
	}
}

// Copy returns a shallow copy.
func (m *Map) Copy() *Map {
	c := NewSize(m.Len())
	m.Range(func(k, v any) bool { c.Set(k, v); return true })
	return c
}

// NewSize returns an empty Map with room for n keys, so that building a
// map of known size allocates once.
func NewSize(n int) *Map {
	if n == 0 {
		return New()
	}
	return &Map{keys: make([]any, 0, n), vals: make(map[any]any, n)}
}

// normKey folds the integer kinds onto int so that 1 from YAML and 1 from
// JSON are the same key.
func normKey(k any) any {
	switch x := k.(type) {
	case int64:
		return int(x)
	case int32:
		return int(x)
	case uint64:
		return int(x)
	}
	return k
}

// KeyString renders a map key as Python's str() does, which is what Salt
// shows when a non-string key reaches JSON output.
func KeyString(k any) string { return py.Str(k) }
