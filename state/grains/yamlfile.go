package grains

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/brinesalt/brine/state/ordered"
)

// LoadFile reads a static grains file (YAML mapping). A missing file is
// an error wrapping os.ErrNotExist; an empty file or one that is not a
// mapping gives an empty map, as salt/grains/extra.py treats it.
func LoadFile(path string) (*ordered.Map, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	v, err := DecodeYAML(b)
	if err != nil {
		return nil, fmt.Errorf("load grains file %s: %w", path, err)
	}
	m, ok := v.(*ordered.Map)
	if !ok {
		return ordered.New(), nil
	}
	return m, nil
}

// SaveFile writes m to path as block-style YAML, as grains.setvals does
// with yaml.safe_dump(default_flow_style=False), creating the directory.
func SaveFile(path string, m *ordered.Map) error {
	b, err := EncodeYAML(m)
	if err != nil {
		return fmt.Errorf("save grains file %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("save grains file %s: %w", path, err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("save grains file %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("save grains file %s: %w", path, err)
	}
	return nil
}

// DecodeYAML parses one YAML document into the ordered value model with
// PyYAML safe_load's YAML 1.1 scalars (yes/no/on/off booleans, 0755
// octal). An empty document is nil.
func DecodeYAML(b []byte) (any, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, nil
	}
	return fromNode(doc.Content[0])
}

func fromNode(n *yaml.Node) (any, error) {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return fromNode(n.Content[0])
	case yaml.AliasNode:
		return fromNode(n.Alias)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := fromNode(c)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		m := ordered.New()
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, err := fromNode(n.Content[i])
			if err != nil {
				return nil, err
			}
			v, err := fromNode(n.Content[i+1])
			if err != nil {
				return nil, err
			}
			if _, bad := k.([]any); bad {
				return nil, fmt.Errorf("line %d: unhashable mapping key", n.Content[i].Line)
			}
			if _, bad := k.(*ordered.Map); bad {
				return nil, fmt.Errorf("line %d: unhashable mapping key", n.Content[i].Line)
			}
			m.Set(k, v)
		}
		return m, nil
	}
	return scalar(n), nil
}

// scalar resolves a scalar node the way PyYAML's SafeLoader does.
func scalar(n *yaml.Node) any {
	if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 || n.Tag == "!!str" && n.Style != 0 {
		return n.Value
	}
	s := n.Value
	switch s {
	case "", "~", "null", "Null", "NULL":
		if n.Tag == "!!str" && s != "" {
			return s
		}
		return nil
	case "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON":
		return true
	case "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF":
		return false
	}
	clean := strings.ReplaceAll(s, "_", "")
	if i, ok := parseInt11(clean); ok {
		return i
	}
	if f, err := strconv.ParseFloat(clean, 64); err == nil && strings.ContainsAny(clean, ".eE") && !strings.ContainsAny(clean, "xX") {
		return f
	}
	switch strings.ToLower(s) {
	case ".inf", "+.inf":
		return math.Inf(1)
	case "-.inf":
		return math.Inf(-1)
	case ".nan":
		return math.NaN()
	}
	return s
}

func parseInt11(s string) (int, bool) {
	neg := false
	body := s
	if strings.HasPrefix(body, "-") || strings.HasPrefix(body, "+") {
		neg = body[0] == '-'
		body = body[1:]
	}
	if body == "" {
		return 0, false
	}
	base := 10
	switch {
	case strings.HasPrefix(body, "0x"):
		base, body = 16, body[2:]
	case strings.HasPrefix(body, "0b"):
		base, body = 2, body[2:]
	case len(body) > 1 && body[0] == '0':
		base = 8
	}
	u, err := strconv.ParseInt(body, base, 64)
	if err != nil {
		return 0, false
	}
	if neg {
		u = -u
	}
	return int(u), true
}

// EncodeYAML renders v in block style, keys in map order.
func EncodeYAML(v any) ([]byte, error) {
	n, err := toNode(v)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(n); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func toNode(v any) (*yaml.Node, error) {
	switch x := v.(type) {
	case *ordered.Map:
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		var err error
		x.Range(func(k, val any) bool {
			var kn, vn *yaml.Node
			if kn, err = toNode(k); err != nil {
				return false
			}
			if vn, err = toNode(val); err != nil {
				return false
			}
			n.Content = append(n.Content, kn, vn)
			return true
		})
		return n, err
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for _, e := range x {
			en, err := toNode(e)
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, en)
		}
		return n, nil
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}, nil
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(x)}, nil
	case int:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(x)}, nil
	case float64:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: ordered.FormatFloat(x)}, nil
	case string:
		n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: x}
		if _, isStr := scalar(&yaml.Node{Kind: yaml.ScalarNode, Value: x}).(string); !isStr {
			n.Style = yaml.SingleQuotedStyle
		}
		return n, nil
	}
	return nil, fmt.Errorf("cannot encode %T as YAML", v)
}
