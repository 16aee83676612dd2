package run

import (
	"sort"

	"github.com/brinesalt/brine/internal/ordered"
)

// Results holds the returns of a state run by tag (Salt's `running`
// dict), remembering insertion order.
type Results struct {
	tags []string
	m    map[string]*ordered.Map
}

// NewResults returns an empty set.
func NewResults() *Results { return &Results{m: map[string]*ordered.Map{}} }

// Get returns the return stored under tag.
func (r *Results) Get(tag string) (*ordered.Map, bool) {
	v, ok := r.m[tag]
	return v, ok
}

// Has reports whether tag has run.
func (r *Results) Has(tag string) bool { _, ok := r.m[tag]; return ok }

// Set stores ret under tag.
func (r *Results) Set(tag string, ret *ordered.Map) {
	if _, ok := r.m[tag]; !ok {
		r.tags = append(r.tags, tag)
	}
	r.m[tag] = ret
}

// Len reports the number of returns.
func (r *Results) Len() int { return len(r.tags) }

// Tags returns the tags in insertion order.
func (r *Results) Tags() []string { return append([]string(nil), r.tags...) }

// Map returns the returns as an ordered map from tag to return, sorted by
// __run_num__ (the order in which the states ran).
func (r *Results) Map() *ordered.Map {
	tags := r.Tags()
	sort.SliceStable(tags, func(i, j int) bool {
		return runNum(r.m[tags[i]]) < runNum(r.m[tags[j]])
	})
	out := ordered.New()
	for _, t := range tags {
		out.Set(t, r.m[t])
	}
	return out
}

func runNum(m *ordered.Map) int {
	n, _ := m.Value("__run_num__").(int)
	return n
}

// snapshot returns a copy of the set: the same returns, its own index.
func (r *Results) snapshot() *Results {
	c := &Results{tags: append([]string(nil), r.tags...), m: make(map[string]*ordered.Map, len(r.m))}
	for k, v := range r.m {
		c.m[k] = v
	}
	return c
}
