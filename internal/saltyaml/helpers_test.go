package saltyaml

import (
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/brinesalt/brine/internal/ordered"
)

// kv is how tests compare an *ordered.Map: as its ordered entries.
type kv struct {
	K, V any
}

var cmpOpts = cmp.Options{
	cmp.Transformer("entries", func(m *ordered.Map) []kv {
		var out []kv
		m.Range(func(k, v any) bool { out = append(out, kv{k, v}); return true })
		return out
	}),
	cmpopts.EquateNaNs(),
}

// om builds an *ordered.Map from alternating keys and values.
func om(pairs ...any) *ordered.Map { return ordered.FromPairs(pairs...) }
