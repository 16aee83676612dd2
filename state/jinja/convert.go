package jinja

import (
	"fmt"
	"reflect"
	"sort"

	"github.com/brinesalt/brine/internal/ordered"
)

// normalize turns a value from outside (Vars, Salt calls, loaders) into
// the engine's representation: lists become *pyList, maps are copied into
// fresh *ordered.Map so that template mutation (dict.update) never
// reaches the caller's data, and Go integer and float kinds fold onto int
// and float64.
func normalize(v any) any {
	switch x := v.(type) {
	case nil, bool, int, float64, string, *pyList, tuple, *namespace, *undefined, *macro, *module, callable:
		return v
	case *ordered.Map:
		m := ordered.New()
		x.Range(func(k, val any) bool { m.Set(k, normalize(val)); return true })
		return m
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(e)
		}
		return newList(out)
	case []string:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = e
		}
		return newList(out)
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		m := ordered.New()
		for _, k := range keys {
			m.Set(k, normalize(x[k]))
		}
		return m
	case int64:
		return int(x)
	case int32:
		return int(x)
	case uint64:
		return int(x)
	case uint32:
		return int(x)
	case uint:
		return int(x)
	case float32:
		return float64(x)
	case fmt.Stringer:
		return x.String()
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		out := make([]any, rv.Len())
		for i := range out {
			out[i] = normalize(rv.Index(i).Interface())
		}
		return newList(out)
	case reflect.Map:
		m := ordered.New()
		keys := rv.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i]) < fmt.Sprint(keys[j]) })
		for _, k := range keys {
			m.Set(normalize(k.Interface()), normalize(rv.MapIndex(k).Interface()))
		}
		return m
	case reflect.Int, reflect.Int8, reflect.Int16:
		return int(rv.Int())
	case reflect.String:
		return rv.String()
	case reflect.Bool:
		return rv.Bool()
	}
	return v
}

// export turns an engine value back into Brine's value model: lists and
// tuples become []any, namespaces plain maps, undefined nil, and other
// engine objects their string form.
func export(v any) any { return exportDepth(v, 0) }

// maxExportDepth cuts self-containing values short (as nil) instead of
// recursing forever.
const maxExportDepth = 500

func exportDepth(v any, depth int) any {
	if depth > maxExportDepth {
		return nil
	}
	switch x := v.(type) {
	case nil, bool, int, float64, string:
		return v
	case *pyList:
		out := make([]any, len(x.items))
		for i, e := range x.items {
			out[i] = exportDepth(e, depth+1)
		}
		return out
	case *namedTuple:
		return exportDepth(x.vals, depth)
	case *dictView:
		return exportDepth(newList(x.items), depth)
	case tuple:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = exportDepth(e, depth+1)
		}
		return out
	case *ordered.Map:
		m := ordered.New()
		x.Range(func(k, val any) bool { m.Set(k, exportDepth(val, depth+1)); return true })
		return m
	case *namespace:
		return exportDepth(x.attrs, depth)
	case *undefined:
		return nil
	case *module:
		return x.output
	}
	return pyStr(v)
}
