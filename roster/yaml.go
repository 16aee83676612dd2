package roster

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/brinesalt/brine/state/ordered"
	"gopkg.in/yaml.v3"
)

// This file reads the YAML step of the roster pipeline into yaml.v3 nodes,
// so that every value keeps its line, and resolves plain scalars as
// Salt's loader does (PyYAML's YAML 1.1 resolver plus
// salt/utils/yamlloader.py construct_scalar, which drops leading zeros so
// that 0077 is the int 77).

// parseYAML parses src into a document node; a nil node means an empty
// document.
func parseYAML(src []byte, file string) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, &Error{File: file, Line: yamlErrLine(err), Msg: "yaml: " + yamlErrMsg(err), Err: err}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, nil
	}
	return doc.Content[0], nil
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlErrLine takes the line out of a yaml.v3 syntax error; this is the
// one place that reads a message, because yaml.v3 exposes no position.
func yamlErrLine(err error) int {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		return 0
	}
	if m := yamlLineRE.FindStringSubmatch(err.Error()); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return 0
}

func yamlErrMsg(err error) string {
	if m := yamlLineRE.FindStringSubmatch(err.Error()); m != nil {
		return m[2]
	}
	return strings.TrimPrefix(err.Error(), "yaml: ")
}

// maxNodes bounds the work of expanding aliases, against "billion
// laughs" documents.
const maxNodes = 1 << 20

// decoder turns nodes into the ordered value model, refusing recursive
// aliases and runaway expansion.
type decoder struct {
	active map[*yaml.Node]bool
	budget int
}

func newDecoder() *decoder { return &decoder{active: map[*yaml.Node]bool{}, budget: maxNodes} }

// enter marks n in progress; it fails for a node that contains itself.
func (d *decoder) enter(n *yaml.Node) error {
	if d.active[n] {
		return fmt.Errorf("line %d: recursive alias", n.Line)
	}
	d.budget--
	if d.budget < 0 {
		return fmt.Errorf("line %d: document too large after alias expansion", n.Line)
	}
	d.active[n] = true
	return nil
}

func (d *decoder) decode(n *yaml.Node) (any, error) {
	if err := d.enter(n); err != nil {
		return nil, err
	}
	defer delete(d.active, n)
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return d.decode(n.Content[0])
	case yaml.AliasNode:
		return d.decode(n.Alias)
	case yaml.ScalarNode:
		return resolveScalar(n)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := d.decode(c)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		return d.mapping(n)
	}
	return nil, fmt.Errorf("line %d: unsupported yaml node", n.Line)
}

func (d *decoder) mapping(n *yaml.Node) (any, error) {
	pairs, err := d.pairs(n)
	if err != nil {
		return nil, err
	}
	m := ordered.New()
	for _, kv := range pairs {
		k, err := d.decode(kv[0])
		if err != nil {
			return nil, err
		}
		switch k.(type) {
		case []any, *ordered.Map:
			return nil, fmt.Errorf("line %d: unhashable mapping key", kv[0].Line)
		}
		v, err := d.decode(kv[1])
		if err != nil {
			return nil, err
		}
		m.Set(k, v)
	}
	return m, nil
}

// pairs returns the key/value node pairs of a mapping with YAML merge
// keys (<<) expanded: merged pairs first, own pairs after, so own keys
// win as in PyYAML's flatten_mapping.
func (d *decoder) pairs(n *yaml.Node) ([][2]*yaml.Node, error) {
	var merged, own [][2]*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.Tag != "!!merge" {
			own = append(own, [2]*yaml.Node{k, v})
			continue
		}
		srcs, err := d.mergeSources(v)
		if err != nil {
			return nil, err
		}
		for _, src := range srcs {
			if err := d.enter(src); err != nil {
				return nil, err
			}
			p, err := d.pairs(src)
			delete(d.active, src)
			if err != nil {
				return nil, err
			}
			d.budget -= len(p)
			if d.budget < 0 {
				return nil, fmt.Errorf("line %d: document too large after merge expansion", v.Line)
			}
			merged = append(merged, p...)
		}
	}
	return append(merged, own...), nil
}

func (d *decoder) mergeSources(v *yaml.Node) ([]*yaml.Node, error) {
	if v.Kind == yaml.AliasNode {
		v = v.Alias
	}
	switch v.Kind {
	case yaml.MappingNode:
		return []*yaml.Node{v}, nil
	case yaml.SequenceNode:
		var out []*yaml.Node
		for _, c := range v.Content {
			if c.Kind == yaml.AliasNode {
				c = c.Alias
			}
			if c.Kind != yaml.MappingNode {
				return nil, fmt.Errorf("line %d: expected a mapping for merging", c.Line)
			}
			out = append(out, c)
		}
		return out, nil
	}
	return nil, fmt.Errorf("line %d: expected a mapping or list of mappings for merging", v.Line)
}

var (
	yaml11Int   = regexp.MustCompile(`^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+)$`)
	yaml11Float = regexp.MustCompile(`^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$`)
)

// resolveScalar applies PyYAML's implicit resolvers to a plain scalar and
// honours explicit tags; quoted scalars are strings.
func resolveScalar(n *yaml.Node) (any, error) {
	s := n.Value
	tag := n.Tag
	if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		if tag == "" || tag == "!!str" || n.Style&yaml.TaggedStyle == 0 {
			return s, nil
		}
	}
	if n.Style&yaml.TaggedStyle != 0 {
		switch tag {
		case "!!str", "!":
			return s, nil
		case "!!int":
			return parseYAMLInt(s)
		case "!!float":
			return parseYAMLFloat(s)
		case "!!bool":
			if b, ok := yaml11Bool(s); ok {
				return b, nil
			}
			return nil, fmt.Errorf("line %d: invalid !!bool %q", n.Line, s)
		case "!!null":
			return nil, nil
		}
	}
	switch s {
	case "", "~", "null", "Null", "NULL":
		return nil, nil
	}
	if b, ok := yaml11Bool(s); ok {
		return b, nil
	}
	if yaml11Int.MatchString(s) {
		return parseYAMLInt(s)
	}
	if yaml11Float.MatchString(s) {
		return parseYAMLFloat(s)
	}
	return s, nil
}

func yaml11Bool(s string) (bool, bool) {
	switch s {
	case "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON":
		return true, true
	case "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF":
		return false, true
	}
	return false, false
}

// parseYAMLInt reads an int as Salt does: leading zeros are dropped, so a
// YAML 1.1 octal literal is read as decimal (yamlloader.py).
func parseYAMLInt(s string) (any, error) {
	t := strings.ReplaceAll(s, "_", "")
	neg := false
	if t != "" && (t[0] == '-' || t[0] == '+') {
		neg = t[0] == '-'
		t = t[1:]
	}
	base := 10
	switch {
	case strings.HasPrefix(t, "0b"):
		base, t = 2, t[2:]
	case strings.HasPrefix(t, "0x"):
		base, t = 16, t[2:]
	case strings.HasPrefix(s, "0"):
		t = strings.TrimLeft(t, "0")
		if t == "" {
			t = "0"
		}
	case len(t) > 1 && t[0] == '0':
		// Salt strips zeros only when the text starts with one; a signed
		// literal stays YAML 1.1 octal (-017 is -15).
		base = 8
	}
	u, err := strconv.ParseInt(t, base, 64)
	if err != nil {
		// Python ints are unbounded; keep the text rather than fail.
		return s, nil
	}
	if neg {
		u = -u
	}
	return int(u), nil
}

func parseYAMLFloat(s string) (any, error) {
	t := strings.ReplaceAll(s, "_", "")
	switch strings.ToLower(strings.TrimLeft(t, "+-")) {
	case ".inf":
		if strings.HasPrefix(t, "-") {
			return math.Inf(-1), nil
		}
		return math.Inf(1), nil
	case ".nan":
		return math.NaN(), nil
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil {
		return nil, fmt.Errorf("invalid float %q", s)
	}
	return f, nil
}
