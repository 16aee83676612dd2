package saltyaml

import (
	"go.yaml.in/yaml/v4"
)

// flatten returns the key/value node pairs of mapping n after merge keys
// are applied as SaltYamlSafeLoader.flatten_mapping does
// (salt/utils/yamlloader.py), which differs from PyYAML's own:
//
//   - merged pairs go first, own pairs after;
//   - a merged pair is dropped only when an own key has the same source
//     text, so "1" and "01" both stay (and then conflict);
//   - with a list of mappings, later ones come first and repeated keys
//     among them are all kept, which then fails as a conflicting ID.
//
// A key "=" (PyYAML's value tag) is an ordinary string key.
//
// Salt's version rewrites the node in place, so a node is flattened once
// however often it is merged; results are kept per node for the same
// effect, and a mapping that merges itself sees only its own keys.
func (d *decoder) flatten(n *Node) ([][2]*Node, error) {
	if p, ok := d.flat[n]; ok {
		return p, nil
	}
	var own [][2]*Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		if dk := deref(n.Content[i]); dk.Kind != yaml.ScalarNode || tagOf(dk) != tagMerge {
			own = append(own, [2]*Node{n.Content[i], n.Content[i+1]})
		}
	}
	if len(own) == len(n.Content)/2 {
		d.flat[n] = own
		return own, nil
	}
	d.flat[n] = own // what a recursive merge of n sees
	var merge [][2]*Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if dk := deref(k); dk.Kind != yaml.ScalarNode || tagOf(dk) != tagMerge {
			continue
		}
		m, err := d.mergeSource(n, deref(v))
		if err != nil {
			return nil, err
		}
		merge = append(merge, m...)
	}
	if len(merge) == 0 {
		return own, nil
	}
	existing := map[string]bool{}
	for _, p := range own {
		if k := deref(p[0]); k.Kind == yaml.ScalarNode {
			existing[k.Value] = true
		}
	}
	out := make([][2]*Node, 0, len(merge)+len(own))
	for _, p := range merge {
		if k := deref(p[0]); k.Kind == yaml.ScalarNode && existing[k.Value] {
			continue
		}
		out = append(out, p)
	}
	out = append(out, own...)
	d.flat[n] = out
	return out, nil
}

func (d *decoder) mergeSource(n, v *Node) ([][2]*Node, error) {
	switch v.Kind {
	case yaml.MappingNode:
		return d.flatten(v)
	case yaml.SequenceNode:
		var groups [][][2]*Node
		for _, s := range v.Content {
			s = deref(s)
			if s.Kind != yaml.MappingNode {
				return nil, mergeError(n, s, "expected a mapping for merging, but found "+kindName(s))
			}
			g, err := d.flatten(s)
			if err != nil {
				return nil, err
			}
			groups = append(groups, g)
		}
		var out [][2]*Node
		for i := len(groups) - 1; i >= 0; i-- {
			out = append(out, groups[i]...)
		}
		return out, nil
	}
	return nil, mergeError(n, v, "expected a mapping or list of mappings for merging, but found "+kindName(v))
}

func mergeError(ctx, at *Node, msg string) *Error {
	return &Error{Line: at.Line, Column: at.Column, Msg: msg, Stage: StageConstructor,
		Context: "while constructing a mapping", ContextLine: ctx.Line, ContextColumn: ctx.Column}
}
