package jinja

import (
	"strconv"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
)

func fGroupby(r *runner, v any, args []any, kw *ordered.Map) (any, error) {
	items, err := r.iterate(v)
	if err != nil {
		return nil, err
	}
	attr := arg(args, kw, 0, "attribute", nil)
	def, hasDef := kw.Get("default")
	keyOf := func(x any) (any, error) {
		k, err := r.attrPath(x, attr)
		if err != nil {
			return nil, err
		}
		if _, ok := k.(*undefined); ok && hasDef {
			return def, nil
		}
		return k, nil
	}
	keys := make([]any, len(items))
	for i, it := range items {
		if keys[i], err = keyOf(it); err != nil {
			return nil, err
		}
		if u, ok := keys[i].(*undefined); ok && r.strictFor(u) {
			return nil, u.err()
		}
	}
	idx := make([]any, len(items))
	for i := range idx {
		idx[i] = i
	}
	if err := sortValues(idx, func(x any) any { return keys[x.(int)] }, false); err != nil {
		return nil, err
	}
	var out []any
	for _, x := range idx {
		i := x.(int)
		if n := len(out); n > 0 && equal(out[n-1].(*namedTuple).vals[0], keys[i]) {
			g := out[n-1].(*namedTuple).vals[1].(*pyList)
			g.items = append(g.items, items[i])
			continue
		}
		out = append(out, &namedTuple{names: []string{"grouper", "list"}, vals: tuple{keys[i], newList([]any{items[i]})}})
	}
	return newList(out), nil
}

// attrPath resolves Jinja's attribute argument: "a.b" or "a.0" digs into
// nested values, an int indexes.
func (r *runner) attrPath(v, attr any) (any, error) {
	if attr == nil {
		return v, nil
	}
	s, ok := attr.(string)
	if !ok {
		return r.getitem(v, attr)
	}
	for _, part := range strings.Split(s, ".") {
		var key any = part
		if n, err := strconv.Atoi(part); err == nil {
			key = n
		}
		nv, err := r.getitem(v, key)
		if err != nil {
			return nil, err
		}
		v = nv
	}
	return v, nil
}
