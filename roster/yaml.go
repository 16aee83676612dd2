package roster

import (
	"errors"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/saltyaml"
	"go.yaml.in/yaml/v4"
)

// This file reads the YAML step of the roster pipeline with Salt's loader
// rules (internal/saltyaml) while keeping the nodes, so that a value of the
// wrong type can be reported with its line.

// yamlError converts a saltyaml error into a roster *Error.
func yamlError(err error, file, note string) *Error {
	var ye *saltyaml.Error
	if errors.As(err, &ye) {
		msg := ye.Msg
		if ye.Context != "" {
			msg = ye.Context + ": " + msg
		}
		return &Error{File: file, Line: ye.Line, Msg: "yaml: " + msg + note, Err: err}
	}
	return &Error{File: file, Msg: "yaml: " + err.Error() + note, Err: err}
}

func deref(n *saltyaml.Node) *saltyaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && n.Alias != nil && i < 100; i++ {
		n = n.Alias
	}
	return n
}

// nodePair is a key and value node of a mapping.
type nodePair struct{ key, val *saltyaml.Node }

// ownPairs indexes the key/value nodes written directly in mapping n by
// the str() of the key (merged-in keys, from <<, are not there; their
// lines fall back to the mapping's).
func ownPairs(n *saltyaml.Node) map[string]nodePair {
	n = deref(n)
	out := map[string]nodePair{}
	if n == nil || n.Kind != yaml.MappingNode {
		return out
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := deref(n.Content[i])
		if k.Kind != yaml.ScalarNode {
			continue
		}
		kv, err := saltyaml.Decode(k)
		if err != nil {
			continue
		}
		out[ordered.KeyString(kv)] = nodePair{n.Content[i], n.Content[i+1]}
	}
	return out
}
