package reactor

import (
	"fmt"
	"os"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/saltyaml"
	"github.com/brinesalt/brine/state/compile"
)

// Entry is one item of the reactor map: events whose tag matches the
// glob Tag run the SLS files (or globs of them) in SLS.
type Entry struct {
	Tag string
	SLS []string
	// single is an SLS given as a string rather than a list, which
	// reactor.list shows as it was given.
	single bool
}

// ParseMap reads the `reactor:` option: a list of one-key mappings
// {tag glob: sls or [sls, ...]}, or the path of a YAML file holding that
// list (salt/utils/reactor.py list_reactors). Items that are not
// one-key mappings are skipped, as Salt skips them; a value that is
// neither a string nor a list matches and runs nothing.
func ParseMap(v any) ([]Entry, error) {
	if file, ok := v.(string); ok {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("read reactor map %s: %w", file, err)
		}
		doc, err := saltyaml.Load(b, file)
		if err != nil {
			return nil, fmt.Errorf("parse YAML in reactor map %s: %w", file, err)
		}
		v = doc
	}
	list, ok := v.([]any)
	if v != nil && !ok {
		return nil, fmt.Errorf("reactor: the map is a %T, not a list of {tag: sls} mappings", v)
	}
	var out []Entry
	for _, item := range list {
		m, ok := item.(*ordered.Map)
		if !ok || m.Len() != 1 {
			continue
		}
		k := m.Keys()[0]
		e := Entry{Tag: ordered.KeyString(k)}
		switch x := m.Value(k).(type) {
		case string:
			e.SLS, e.single = []string{x}, true
		case []any:
			for _, s := range x {
				e.SLS = append(e.SLS, ordered.KeyString(s))
			}
		}
		out = append(out, e)
	}
	return out, nil
}

// Match returns the SLS of every entry whose glob matches tag
// (fnmatch.fnmatch), in the map's order.
func Match(entries []Entry, tag string) []string {
	var out []string
	for _, e := range entries {
		if compile.Fnmatch(tag, e.Tag) {
			out = append(out, e.SLS...)
		}
	}
	return out
}
