package saltyaml

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v4"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
)

// Node is the YAML node type ParseNode returns, re-exported so callers
// need not import the parser.
type Node = yaml.Node

// Node kinds, re-exported from the parser.
const (
	DocumentNode = yaml.DocumentNode
	SequenceNode = yaml.SequenceNode
	MappingNode  = yaml.MappingNode
	ScalarNode   = yaml.ScalarNode
	AliasNode    = yaml.AliasNode
)

// Load parses one YAML document as Salt's loader does and returns its
// value: nil for an empty document, otherwise a value of the ordered model.
// filename only labels errors, which are always *Error.
func Load(src []byte, filename string) (any, error) {
	root, err := ParseNode(src, filename)
	if err != nil {
		return nil, err
	}
	return decodeFile(root, filename)
}

// ParseNode parses src into its root node without interpreting scalars,
// so a caller can report the line of a value it rejects. It returns nil
// for an empty document. A stream of more than one document is an error,
// as PyYAML's get_single_node makes it ("expected a single document in
// the stream").
func ParseNode(src []byte, filename string) (*Node, error) {
	first, err := parseFirst(src, filename)
	if err != nil {
		return nil, err
	}
	if err := libyamlCheck(src, filename); err != nil {
		return nil, err
	}
	if first == nil {
		return nil, nil
	}
	if err := checkAnchors(first, filename); err != nil {
		return nil, err
	}
	if first.Kind == yaml.DocumentNode {
		if len(first.Content) == 0 {
			return nil, nil
		}
		return first.Content[0], nil
	}
	return first, nil
}

// parseFirst returns the first document of src, or nil when there is
// none, and fails when a second document follows.
func parseFirst(src []byte, filename string) (*Node, error) {
	ld, err := yaml.NewLoader(bytes.NewReader(src))
	if err != nil {
		return nil, fromYAML(err, filename)
	}
	var first yaml.Node
	if err := ld.Load(&first); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, fromYAML(err, filename)
	}
	var second yaml.Node
	err = ld.Load(&second)
	if errors.Is(err, io.EOF) {
		return &first, nil
	}
	if err != nil {
		// PyYAML stops at the start of the second document; report that
		// rather than an error inside it.
		second.Line, second.Column = nextDocStart(src, first.Line)
		if second.Line == 0 {
			return nil, fromYAML(err, filename)
		}
	}
	return nil, &Error{
		File: filename, Line: second.Line, Column: second.Column,
		Msg: "but found another document", Stage: StageComposer,
		Context:     "expected a single document in the stream",
		ContextLine: first.Line, ContextColumn: first.Column,
	}
}

// nextDocStart finds the first "---" line after line, or returns 0.
func nextDocStart(src []byte, after int) (int, int) {
	for i, l := range strings.Split(string(src), "\n") {
		if i+1 > after && strings.HasPrefix(l, "---") && (len(l) == 3 || l[3] == ' ' || l[3] == '\t' || l[3] == '\r') {
			return i + 1, 1
		}
	}
	return 0, 0
}

// Decode converts a node from ParseNode into a value with Salt's rules.
// Its errors are *Error with an empty File; set File before reporting.
func Decode(node *Node) (any, error) {
	return decodeFile(node, "")
}

func decodeFile(node *Node, filename string) (any, error) {
	d := decoder{done: map[*Node]any{}, busy: map[*Node]bool{}, flat: map[*Node][][2]*Node{}}
	err := checkExpansion(node)
	var v any
	if err == nil {
		v, err = d.value(node)
	}
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			e.File = filename
		}
		return nil, err
	}
	return v, nil
}

// decoder holds what PyYAML's constructor keeps per document: values of
// nodes already built, so that aliases share them as in Python.
type decoder struct {
	done map[*Node]any
	busy map[*Node]bool
	flat map[*Node][][2]*Node
}

func deref(n *Node) *Node {
	for n != nil && n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func (d *decoder) value(n *Node) (any, error) {
	n = deref(n)
	if n == nil {
		return nil, nil
	}
	if v, ok := d.done[n]; ok {
		return v, nil
	}
	if d.busy[n] {
		return nil, nodeError(n, "found recursive alias, which Brine cannot represent")
	}
	d.busy[n] = true
	defer delete(d.busy, n)
	var v any
	var err error
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return d.value(n.Content[0])
	case yaml.ScalarNode:
		v, err = d.scalar(n)
	case yaml.SequenceNode:
		v, err = d.sequence(n)
	case yaml.MappingNode:
		v, err = d.mapping(n)
	default:
		err = nodeError(n, "unexpected node kind %v", n.Kind)
	}
	if err != nil {
		return nil, err
	}
	d.done[n] = v
	return v, nil
}

// tagOf returns the long tag a node resolves to, as PyYAML's composer
// decides: an explicit tag wins; no tag or the non-specific "!" resolves
// implicitly for plain scalars (and, as libyaml does, for "!"-tagged
// quoted ones); other scalars are strings.
func tagOf(n *Node) string {
	if n.Style&yaml.TaggedStyle != 0 && n.Tag != "" && n.Tag != "!" {
		return longTag(n.Tag)
	}
	switch n.Kind {
	case yaml.SequenceNode:
		return tagSeq
	case yaml.MappingNode:
		return tagMap
	}
	plain := n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) == 0
	if plain && n.Tag == "!" && n.Value == "" {
		return tagStr // libyaml marks a tagged empty node not implicit
	}
	if plain || n.Tag == "!" {
		return resolveImplicit(n.Value)
	}
	return tagStr
}

func longTag(t string) string {
	if len(t) > 2 && t[:2] == "!!" {
		return tagPrefix + t[2:]
	}
	return t
}

func kindName(n *Node) string {
	switch n.Kind {
	case yaml.ScalarNode:
		return "scalar"
	case yaml.SequenceNode:
		return "sequence"
	case yaml.MappingNode:
		return "mapping"
	}
	return "node"
}

func (d *decoder) scalar(n *Node) (any, error) {
	tag := tagOf(n)
	switch tag {
	case tagMap, tagOmap, tagSet:
		return nil, nodeError(n, "expected a mapping node, but found scalar")
	case tagSeq, tagPairs:
		return nil, nodeError(n, "expected a sequence node, but found scalar")
	}
	v, msg, ok := constructScalar(tag, n.Value)
	if !ok {
		return nil, nodeError(n, "could not determine a constructor for the tag %s", py.QuoteString(tag))
	}
	if msg != "" {
		e := nodeError(n, "%s", msg)
		e.Stage = StageValue
		return nil, e
	}
	return v, nil
}

func (d *decoder) sequence(n *Node) (any, error) {
	tag := tagOf(n)
	switch tag {
	case tagSeq:
	case tagPairs:
		return d.pairs(n)
	case tagMap, tagOmap, tagSet:
		return nil, nodeError(n, "expected a mapping node, but found sequence")
	case tagStr, tagInt, tagFloat, tagBool, tagNull, tagTimestamp, tagBinary, tagUnicode:
		return nil, nodeError(n, "expected a scalar node, but found sequence")
	default:
		return nil, nodeError(n, "could not determine a constructor for the tag %s", py.QuoteString(tag))
	}
	out := make([]any, 0, len(n.Content))
	for _, c := range n.Content {
		v, err := d.value(c)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// pairs is SafeConstructor.construct_yaml_pairs: a list of one-key
// mappings becomes a list of [key, value] pairs.
func (d *decoder) pairs(n *Node) (any, error) {
	out := make([]any, 0, len(n.Content))
	for _, c := range n.Content {
		c = deref(c)
		if c.Kind != yaml.MappingNode {
			return nil, &Error{Line: c.Line, Column: c.Column, Stage: StageConstructor,
				Context: "while constructing pairs", ContextLine: n.Line, ContextColumn: n.Column,
				Msg: "expected a mapping of length 1, but found " + kindName(c)}
		}
		if len(c.Content) != 2 {
			return nil, &Error{Line: c.Line, Column: c.Column, Stage: StageConstructor,
				Context: "while constructing pairs", ContextLine: n.Line, ContextColumn: n.Column,
				Msg: "expected a single mapping item, but found " + strconv.Itoa(len(c.Content)/2) + " items"}
		}
		k, err := d.value(c.Content[0])
		if err != nil {
			return nil, err
		}
		v, err := d.value(c.Content[1])
		if err != nil {
			return nil, err
		}
		out = append(out, []any{k, v})
	}
	return out, nil
}

func (d *decoder) mapping(n *Node) (any, error) {
	tag := tagOf(n)
	switch tag {
	case tagMap, tagOmap, tagSet:
	case tagSeq, tagPairs:
		return nil, nodeError(n, "expected a sequence node, but found mapping")
	case tagStr, tagInt, tagFloat, tagBool, tagNull, tagTimestamp, tagBinary, tagUnicode:
		return nil, nodeError(n, "expected a scalar node, but found mapping")
	default:
		return nil, nodeError(n, "could not determine a constructor for the tag %s", py.QuoteString(tag))
	}
	pairs, err := d.flatten(n)
	if err != nil {
		return nil, err
	}
	m := ordered.NewSize(len(pairs))
	for _, p := range pairs {
		if err := d.entry(n, m, p, tag == tagSet); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// entry adds one key/value pair, with SaltYamlSafeLoader.construct_mapping's
// checks: keys must be hashable scalars and may not repeat (Python
// equality, so 1, 1.0 and True are the same key).
func (d *decoder) entry(n *Node, m *ordered.Map, p [2]*Node, isSet bool) error {
	kn := deref(p[0])
	if kn.Kind != yaml.ScalarNode {
		return &Error{Line: kn.Line, Column: kn.Column, Stage: StageConstructor,
			Context: "while constructing a mapping", ContextLine: n.Line, ContextColumn: n.Column,
			Msg: "found unacceptable key " + kindName(kn)}
	}
	var k any
	var err error
	if tagOf(kn) == tagValue {
		k = kn.Value // flatten_mapping retags a "=" key as a string
	} else if k, err = d.value(kn); err != nil {
		return err
	}
	var v any
	if !isSet {
		if v, err = d.value(p[1]); err != nil {
			return err
		}
	}
	if hasPyKey(m, k) {
		return &Error{Line: kn.Line, Column: kn.Column, Stage: StageConstructor,
			Context: "while constructing a mapping", ContextLine: n.Line, ContextColumn: n.Column,
			Msg: "found conflicting ID '" + ordered.KeyString(k) + "'"}
	}
	m.Set(k, v)
	return nil
}

// hasPyKey reports whether m holds a key equal to k under Python's ==,
// where True == 1 == 1.0.
func hasPyKey(m *ordered.Map, k any) bool {
	if m.Has(k) {
		return true
	}
	f, ok := pyNumber(k)
	if !ok {
		return false
	}
	found := false
	m.Range(func(x, _ any) bool {
		if g, ok := pyNumber(x); ok && g == f {
			found = true
			return false
		}
		return true
	})
	return found
}

func pyNumber(v any) (float64, bool) {
	switch x := v.(type) {
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	case int:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}
