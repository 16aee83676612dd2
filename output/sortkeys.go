package output

import (
	"cmp"
	"slices"

	"github.com/brinesalt/brine/state/ordered"
)

// pyEntry is a map entry with the key Python would sort by.
type pyEntry struct {
	key any
	val any
}

// sortedEntries returns m's entries as Python's sorted(dict) orders them:
// by value when all keys are of one comparable kind (numbers, including
// bools, compare with each other), otherwise — where Python raises
// TypeError and nested.py falls back to str() keys — by str(key), with
// the keys replaced by their str() form when strKeysOnMix is set.
func sortedEntries(m *ordered.Map, strKeysOnMix bool) []pyEntry {
	var out []pyEntry
	m.Range(func(k, v any) bool { out = append(out, pyEntry{k, v}); return true })
	if comparableKeys(out) {
		slices.SortStableFunc(out, func(a, b pyEntry) int { return pyCompare(a.key, b.key) })
		return out
	}
	if strKeysOnMix {
		// {str(k): v ...}: a later key with the same str() wins, in the
		// first one's place.
		seen := map[string]int{}
		var dedup []pyEntry
		for _, e := range out {
			s := ordered.KeyString(e.key)
			if i, ok := seen[s]; ok {
				dedup[i].val = e.val
				continue
			}
			seen[s] = len(dedup)
			dedup = append(dedup, pyEntry{s, e.val})
		}
		out = dedup
	}
	slices.SortStableFunc(out, func(a, b pyEntry) int {
		return cmp.Compare(ordered.KeyString(a.key), ordered.KeyString(b.key))
	})
	return out
}

func keyKind(k any) int {
	switch k.(type) {
	case string:
		return 1
	case int, float64, bool:
		return 2
	case nil:
		return 3
	}
	return 4
}

func comparableKeys(es []pyEntry) bool {
	if len(es) < 2 {
		return true
	}
	kind := keyKind(es[0].key)
	if kind == 3 || kind == 4 {
		return false
	}
	for _, e := range es[1:] {
		if keyKind(e.key) != kind {
			return false
		}
	}
	return true
}

func pyCompare(a, b any) int {
	if sa, ok := a.(string); ok {
		return cmp.Compare(sa, b.(string))
	}
	return cmp.Compare(pyNum(a), pyNum(b))
}

func pyNum(v any) float64 {
	switch x := v.(type) {
	case int:
		return float64(x)
	case float64:
		return x
	case bool:
		if x {
			return 1
		}
	}
	return 0
}
