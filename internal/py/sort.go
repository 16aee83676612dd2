package py

import (
	"cmp"
	"slices"
)

// Item is one key and value of a Dict.
type Item struct {
	Key, Value any
}

// Items returns d's items in insertion order.
func Items(d Dict) []Item {
	out := make([]Item, 0, d.Len())
	d.Range(func(k, v any) bool { out = append(out, Item{k, v}); return true })
	return out
}

// SortedItems returns d's items as sorted(d) orders their keys, and
// whether Python could sort them: strings compare with strings and
// numbers (bools among them) with numbers, and any other mix raises
// TypeError in Python. Where it would, the items are ordered by str(key)
// instead, which is what Salt's outputters fall back to
// (salt/output/nested.py), and with strKeys the keys themselves become
// their str() form, a later key of the same str() keeping the first
// one's place ({str(k): v for k, v in d.items()}).
func SortedItems(d Dict, strKeys bool) ([]Item, bool) {
	out := Items(d)
	if Sortable(out) {
		slices.SortStableFunc(out, func(a, b Item) int { return Compare(a.Key, b.Key) })
		return out, true
	}
	if strKeys {
		seen := map[string]int{}
		dedup := out[:0:0]
		for _, e := range out {
			s := Str(e.Key)
			if i, ok := seen[s]; ok {
				dedup[i].Value = e.Value
				continue
			}
			seen[s] = len(dedup)
			dedup = append(dedup, Item{s, e.Value})
		}
		out = dedup
	}
	slices.SortStableFunc(out, func(a, b Item) int { return cmp.Compare(Str(a.Key), Str(b.Key)) })
	return out, false
}

// Sortable reports whether Python's sorted() accepts these keys: all
// strings, or all numbers and bools; a lone key of any kind.
func Sortable(items []Item) bool {
	if len(items) < 2 {
		return true
	}
	kind := keyKind(items[0].Key)
	if kind == kindOther {
		return false
	}
	for _, e := range items[1:] {
		if keyKind(e.Key) != kind {
			return false
		}
	}
	return true
}

const (
	kindString = iota
	kindNumber
	kindOther
)

func keyKind(k any) int {
	switch k.(type) {
	case string:
		return kindString
	case int, int64, float64, bool:
		return kindNumber
	}
	return kindOther
}

// Compare orders two keys of one sortable kind (see Sortable) as Python's
// < does: strings by code point, numbers by value with False as 0 and
// True as 1.
func Compare(a, b any) int {
	if sa, ok := a.(string); ok {
		sb, _ := b.(string)
		return cmp.Compare(sa, sb)
	}
	return cmp.Compare(number(a), number(b))
}

func number(v any) float64 {
	switch x := v.(type) {
	case int:
		return float64(x)
	case int64:
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
