// Package grainsyaml is the YAML codec for grains files and the output
// of custom grain executables, as Salt reads them with PyYAML's
// safe_load and writes them with safe_dump. Importing it registers the
// codec with package grains; the thin's core flavor leaves it out (a
// YAML parser is an eighth of that binary) and asks for the full thin
// when a host has grains only YAML can read.
package grainsyaml

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v4"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/saltyaml"
	"github.com/brinesalt/brine/state/coregrains"
)

func init() {
	coregrains.RegisterYAML(coregrains.YAMLCodec{Decode: decode, Encode: encode})
}

// encode is Salt's safe_dump(default_flow_style=False): block style.
func encode(m *ordered.Map) ([]byte, error) {
	text, err := saltyaml.Dump(m, saltyaml.DumpOptions{})
	return []byte(text), err
}

// decode parses one YAML document into the ordered value model with
// PyYAML safe_load's YAML 1.1 scalars (yes/no/on/off booleans, 0755
// octal). An empty document is nil.
func decode(b []byte) (any, error) {
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
