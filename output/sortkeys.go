package output

import (
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
)

// sortedItems is m's items as Salt's outputters order them: sorted(m),
// or by str(key) where Python cannot compare the keys
// (salt/output/nested.py).
func sortedItems(m *ordered.Map) []py.Item {
	items, _ := py.SortedItems(m, true)
	return items
}
