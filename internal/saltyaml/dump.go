package saltyaml

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
)

// DumpOptions selects how Dump lays out a value; the zero value is block
// style, keys in map order, indent 2, as Salt's yaml outputter prints.
type DumpOptions struct {
	// Flow writes every collection in flow style on as few lines as the
	// 80-column width allows: {a: 1, b: [x, y]} (Salt's |yaml filter,
	// default_flow_style=True).
	Flow bool
	// AutoFlow, when set, overrides Flow with PyYAML's
	// default_flow_style=None, the default of salt.utils.yaml.safe_dump:
	// a collection whose items are all scalars is flow, others block.
	AutoFlow bool
	// SortKeys sorts mapping keys as PyYAML does for a plain dict (Jinja
	// dicts); leave it off for Salt's OrderedDicts. Keys of mixed,
	// incomparable types stay unsorted, as Python's sorted() fails there.
	SortKeys bool
	// Indent is the indentation step; values outside 2..9 mean 2, as in
	// libyaml.
	Indent int
}

// Dump writes v as Salt's salt.utils.yaml.safe_dump does (PyYAML's
// SafeRepresenter on libyaml's emitter, allow_unicode=True, width 80):
// strings are quoted only when needed, single quotes preferred ('yes',
// '0644', ”), double quotes for control characters, long scalars folded.
// The result ends in one newline. Shared sub-values are written out again
// rather than as anchors.
func Dump(v any, opts DumpOptions) (string, error) {
	root, err := represent(v, opts)
	if err != nil {
		return "", err
	}
	e := newEmitter(opts.Indent)
	e.node(root, ctxRoot)
	e.writeIndent()
	return e.b.String(), nil
}

// FilterYAML is Salt's |yaml Jinja filter (format_yaml in
// salt/utils/jinja.py; flow defaults to true there): Dump, then surrounding
// whitespace and a trailing "\n..." document end removed. sortKeys should
// be true for dicts built in Jinja and false for OrderedDicts from YAML.
func FilterYAML(v any, flow, sortKeys bool) (string, error) {
	out, err := Dump(v, DumpOptions{Flow: flow, SortKeys: sortKeys})
	if err != nil {
		return "", err
	}
	out = strings.TrimSpace(out)
	return strings.TrimSuffix(out, "\n..."), nil
}

// DumpDQuote is Salt's yaml_dquote filter (salt/utils/yamlencoding.py):
// s as one double-quoted YAML scalar with PyYAML's escapes, non-ASCII
// escaped too (\xE9, \u2028), never folded.
func DumpDQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\' || r == 0x85 || r == 0x2028 || r == 0x2029 || r == 0xFEFF ||
			r < 0x20 || r > 0x7E:
			b.WriteString(escapeRune(r))
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// Encode is Salt's yaml_encode filter for a scalar: strings as DumpDQuote,
// other scalars in their YAML spelling (null, true, 1.5, .inf). A
// collection, which yaml_encode refuses, is written as one flow-style line.
func Encode(v any) string {
	s, err := EncodeScalar(v)
	if err != nil {
		out, _ := Dump(v, DumpOptions{Flow: true})
		return strings.TrimSuffix(out, "\n")
	}
	return s
}

// EncodeScalar is Encode that fails on collections as yaml_encode does.
func EncodeScalar(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return DumpDQuote(x), nil
	case []any, *ordered.Map:
		return "", fmt.Errorf("yaml_encode() only works with YAML scalar data; failed for %s", pyClassRepr(v))
	}
	n, err := represent(v, DumpOptions{})
	if err != nil {
		return "", err
	}
	return n.value, nil
}

// pyClassRepr is repr(type(v)), as PyYAML names a type it cannot represent.
func pyClassRepr(v any) string {
	switch v.(type) {
	case []any:
		return "<class 'list'>"
	case *ordered.Map:
		return "<class 'collections.OrderedDict'>"
	}
	return fmt.Sprintf("<class '%T'>", v)
}

// rnode is a represented node: what PyYAML's SafeRepresenter hands to the
// serializer.
type rnode struct {
	kind  byte // 's'calar, 'q' sequence, 'm' mapping
	value string
	isStr bool // tag is str (else the value resolves to its own tag)
	items []*rnode
	flow  bool
}

func represent(v any, opts DumpOptions) (*rnode, error) {
	switch x := v.(type) {
	case nil:
		return &rnode{kind: 's', value: "null"}, nil
	case bool:
		if x {
			return &rnode{kind: 's', value: "true"}, nil
		}
		return &rnode{kind: 's', value: "false"}, nil
	case int:
		return &rnode{kind: 's', value: strconv.Itoa(x)}, nil
	case int64:
		return &rnode{kind: 's', value: strconv.FormatInt(x, 10)}, nil
	case float64:
		return &rnode{kind: 's', value: reprFloat(x)}, nil
	case string:
		return &rnode{kind: 's', value: x, isStr: true}, nil
	case []any:
		n := &rnode{kind: 'q'}
		for _, item := range x {
			c, err := represent(item, opts)
			if err != nil {
				return nil, err
			}
			n.items = append(n.items, c)
		}
		n.flow = flowStyle(n, opts)
		return n, nil
	case *ordered.Map:
		n := &rnode{kind: 'm'}
		for _, k := range mapKeys(x, opts.SortKeys) {
			kn, err := represent(k, opts)
			if err != nil {
				return nil, err
			}
			vn, err := represent(x.Value(k), opts)
			if err != nil {
				return nil, err
			}
			n.items = append(n.items, kn, vn)
		}
		n.flow = flowStyle(n, opts)
		return n, nil
	}
	return nil, fmt.Errorf("dump yaml: cannot represent an object: %T", v)
}

// flowStyle is represent_sequence/represent_mapping's choice.
func flowStyle(n *rnode, opts DumpOptions) bool {
	if !opts.AutoFlow {
		return opts.Flow
	}
	for _, c := range n.items {
		if c.kind != 's' {
			return false
		}
	}
	return true
}

// reprFloat is SafeRepresenter.represent_float.
func reprFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return ".nan"
	case math.IsInf(f, 1):
		return ".inf"
	case math.IsInf(f, -1):
		return "-.inf"
	}
	s := strings.ToLower(py.FormatFloat(f))
	if !strings.Contains(s, ".") && strings.Contains(s, "e") {
		s = strings.Replace(s, "e", ".0e", 1)
	}
	return s
}

// mapKeys returns m's keys, sorted when asked and Python could compare
// them all: all strings, or all numbers (bool, int, float).
func mapKeys(m *ordered.Map, sortKeys bool) []any {
	keys := m.Keys()
	if !sortKeys || len(keys) < 2 {
		return keys
	}
	allStr, allNum := true, true
	for _, k := range keys {
		if _, ok := k.(string); !ok {
			allStr = false
		}
		if _, ok := pyNumber(k); !ok {
			allNum = false
		}
	}
	switch {
	case allStr:
		sort.SliceStable(keys, func(i, j int) bool { return keys[i].(string) < keys[j].(string) })
	case allNum:
		sort.SliceStable(keys, func(i, j int) bool {
			a, _ := pyNumber(keys[i])
			b, _ := pyNumber(keys[j])
			return a < b
		})
	}
	return keys
}
