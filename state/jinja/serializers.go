package jinja

import (
	"math"
	"strconv"
	"strings"

	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/internal/saltyaml"

	"github.com/brinesalt/brine/internal/ordered"
)

type jsonOpts struct {
	sortKeys    bool
	ensureASCII bool
	indent      any
}

// pyJSON is Python's json.dumps with the given options.
func pyJSON(v any, o jsonOpts) (string, error) {
	var b strings.Builder
	ind := ""
	switch x := o.indent.(type) {
	case int:
		ind = strings.Repeat(" ", max(x, 0))
	case string:
		ind = x
	}
	err := writeJSON(&b, v, o, ind, o.indent != nil, 0)
	return b.String(), err
}

func writeJSON(b *strings.Builder, v any, o jsonOpts, ind string, pretty bool, depth int) error {
	if depth > 500 {
		return runtimeErr("Circular reference detected")
	}
	nl := func(d int) {
		if pretty {
			b.WriteByte('\n')
			b.WriteString(strings.Repeat(ind, d))
		}
	}
	itemSep := ", "
	if pretty {
		itemSep = ","
	}
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case int:
		b.WriteString(strconv.Itoa(x))
	case float64:
		switch {
		case math.IsInf(x, 1):
			b.WriteString("Infinity")
		case math.IsInf(x, -1):
			b.WriteString("-Infinity")
		case math.IsNaN(x):
			b.WriteString("NaN")
		default:
			b.WriteString(py.FormatFloat(x))
		}
	case string:
		b.WriteString(py.QuoteJSON(x, o.ensureASCII))
	case *pyList, tuple:
		items, _ := seqItems(x)
		if len(items) == 0 {
			b.WriteString("[]")
			return nil
		}
		b.WriteByte('[')
		for i, it := range items {
			if i > 0 {
				b.WriteString(itemSep)
			}
			nl(depth + 1)
			if err := writeJSON(b, it, o, ind, pretty, depth+1); err != nil {
				return err
			}
		}
		nl(depth)
		b.WriteByte(']')
	case *ordered.Map:
		if x.Len() == 0 {
			b.WriteString("{}")
			return nil
		}
		keys := x.Keys()
		if o.sortKeys {
			if err := sortValues(keys, nil, false); err != nil {
				return err
			}
		}
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteString(itemSep)
			}
			nl(depth + 1)
			var ks string
			switch kk := k.(type) {
			case string:
				ks = kk
			case nil:
				ks = "null"
			case bool:
				ks = strconv.FormatBool(kk)
			default:
				ks = pyStr(k)
			}
			b.WriteString(py.QuoteJSON(ks, o.ensureASCII))
			b.WriteString(": ")
			if err := writeJSON(b, x.Value(k), o, ind, pretty, depth+1); err != nil {
				return err
			}
		}
		nl(depth)
		b.WriteByte('}')
	case *namespace:
		return typeErr("Object of type Namespace is not JSON serializable")
	case *undefined:
		name := "StrictUndefined"
		if x.lenient {
			name = "Undefined"
		}
		return typeErr("Object of type %s is not JSON serializable", name)
	default:
		return typeErr("Object of type %s is not JSON serializable", typeName(v))
	}
	return nil
}

func fYAML(r *runner, v any, args []any, kw *ordered.Map) (any, error) {
	flow, _ := r.truthy(arg(args, kw, 0, "flow_style", true))
	return saltyaml.FilterYAML(export(v), flow, true)
}

// fYAMLEncode is Salt's yaml_encode: scalars only.
func fYAMLEncode(r *runner, v any, _ []any, _ *ordered.Map) (any, error) {
	switch v.(type) {
	case nil, bool, int, float64, string:
		return saltyaml.EncodeScalar(v)
	}
	return nil, typeErr("yaml_encode() only works with YAML scalar data; failed for <class '%s'>", typeName(v))
}

// yamlSingleQuote is Salt's yaml_squote.
func yamlSingleQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
