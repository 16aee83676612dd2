package saltyaml

import "go.yaml.in/yaml/v4"

// MaxExpanded is how many values a document may stand for once its
// aliases are expanded, beyond ExpansionRatio times the nodes it holds.
// PyYAML keeps an aliased collection shared, but every copy, merge and
// serialisation Salt and Brine then do walks it in full (pillar's
// dictupdate, the state compiler, msgpack to a minion), so a few lines
// of nested aliases — a "billion laughs" — stand for more values than
// memory holds. Loading refuses such a document with its file and line;
// a document without aliases never reaches the limit.
const (
	MaxExpanded    = 1_000_000
	ExpansionRatio = 10
)

// expansion counts the values a node tree stands for with aliases
// expanded, memoised per node so the count costs one pass.
type expansion struct {
	size     map[*Node]int64
	busy     map[*Node]bool
	distinct int64
}

// checkExpansion fails on the first collection whose expanded size is
// past the limits; see MaxExpanded.
func checkExpansion(root *Node) error {
	e := &expansion{size: map[*Node]int64{}, busy: map[*Node]bool{}}
	_, err := e.count(root)
	return err
}

func (e *expansion) count(n *Node) (int64, error) {
	n = deref(n)
	if n == nil {
		return 0, nil
	}
	if s, ok := e.size[n]; ok {
		return s, nil
	}
	if e.busy[n] {
		return 1, nil // a recursive alias; the decoder reports it
	}
	e.busy[n] = true
	defer delete(e.busy, n)
	e.distinct++
	total := int64(1)
	for i, c := range n.Content {
		if n.Kind == yaml.MappingNode && i%2 == 1 && isMergeKey(n.Content[i-1]) {
			total++ // merged pairs share their values; flattening is linear
			continue
		}
		s, err := e.count(c)
		if err != nil {
			return 0, err
		}
		total += s
		if total > MaxExpanded && total > ExpansionRatio*e.distinct {
			return 0, nodeError(c, "aliases here make the document more than %d values (%d nodes written); Brine refuses a YAML alias bomb rather than run out of memory copying it", MaxExpanded, e.distinct)
		}
	}
	if n.Kind != yaml.DocumentNode {
		e.size[n] = total
	}
	return total, nil
}

// isMergeKey reports whether k is a plain << key (SafeConstructor's
// merge key).
func isMergeKey(k *Node) bool {
	k = deref(k)
	return k != nil && k.Kind == yaml.ScalarNode && k.Value == "<<" && k.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) == 0
}
