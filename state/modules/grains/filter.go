package grains

import (
	"regexp"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
)

// FilterBy is salt.utils.data.filter_by: the value of grain (a list of
// values or one) is matched as fnmatch patterns against lookup's keys;
// the first match wins, else lookup[def]; then it is merged over
// lookup[base] and merge is merged over it.
func FilterBy(lookup any, grain string, data *ordered.Map, merge any, def string, base any) (any, error) {
	table, ok := lookup.(*ordered.Map)
	if !ok {
		return nil, modules.Errorf("AttributeError: lookup_dict must be a dict")
	}
	val, found := Traverse(data, grain, DefaultDelimiter)
	if !found {
		val = []any{}
	}
	vals, isList := val.([]any)
	if !isList {
		vals = []any{val}
	}
	var ret any
	for _, each := range vals {
		table.Range(func(k, v any) bool {
			if Fnmatch(ordered.KeyString(k), ordered.KeyString(each)) {
				ret = v
				return false
			}
			return true
		})
		if ret != nil {
			break
		}
	}
	if ret == nil {
		ret = table.Value(def)
	}
	if b, ok := base.(string); ok && b != "" && table.Has(b) {
		bv := table.Value(b)
		if ret == nil {
			ret = bv
		} else if bm, ok := bv.(*ordered.Map); ok {
			rm, ok := ret.(*ordered.Map)
			if !ok {
				return nil, modules.Errorf("filter_by default and look-up values must both be dictionaries.")
			}
			ret = Merge(ordered.DeepCopy(bm).(*ordered.Map), rm)
		}
	}
	if merge != nil && modules.Truthy(merge) {
		mm, ok := merge.(*ordered.Map)
		if !ok {
			return nil, modules.Errorf("filter_by merge argument must be a dictionary.")
		}
		if ret == nil {
			ret = mm
		} else if rm, ok := ret.(*ordered.Map); ok {
			ret = Merge(rm, ordered.DeepCopy(mm).(*ordered.Map))
		}
	}
	return ret, nil
}

// Merge merges src into dst recursively, as salt.utils.dictupdate.update:
// nested dicts merge, everything else replaces. It returns dst.
func Merge(dst, src *ordered.Map) *ordered.Map {
	src.Range(func(k, v any) bool {
		sm, sok := v.(*ordered.Map)
		dm, dok := dst.Value(k).(*ordered.Map)
		if sok && dok {
			dst.Set(k, Merge(dm, sm))
		} else {
			dst.Set(k, v)
		}
		return true
	})
	return dst
}

// Fnmatch is Python's fnmatch.fnmatchcase: * and ? match any character
// including "/", [seq] and [!seq] are classes.
func Fnmatch(pattern, name string) bool {
	var b strings.Builder
	b.WriteString("(?s)^")
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		switch c {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteByte('.')
		case '[':
			j := i + 1
			if j < len(pattern) && pattern[j] == '!' {
				j++
			}
			if j < len(pattern) && pattern[j] == ']' {
				j++
			}
			for j < len(pattern) && pattern[j] != ']' {
				j++
			}
			if j >= len(pattern) {
				b.WriteString(`\[`)
				continue
			}
			class := strings.ReplaceAll(pattern[i+1:j], `\`, `\\`)
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			} else if strings.HasPrefix(class, "^") {
				class = `\` + class
			}
			b.WriteString("[" + class + "]")
			i = j
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	return err == nil && re.MatchString(name)
}
