package pkgstate

import (
	"context"
	"errors"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/states"
)

// holdResults calls pkg.hold or pkg.unhold as pkg.installed does with
// its hold argument, and sorts the per-package returns into modified
// (with changes), unchanged and failed. ok is false when the host has no
// hold support or no hold argument was given.
func holdResults(ctx context.Context, c *states.Call, kw ...any) (modified, same, failed []*ordered.Map, ok bool, err error) {
	v, given := c.Kwargs.Get("hold")
	if !given {
		return nil, nil, nil, false, nil
	}
	if _, lookErr := c.Env.Registry.Lookup(c.Env, "pkg.hold"); lookErr != nil {
		return nil, nil, nil, false, nil
	}
	fun := "pkg.unhold"
	if modules.Truthy(v) {
		fun = "pkg.hold"
	}
	ret, err := salt(ctx, c, fun, nil, kw...)
	if err != nil {
		return nil, nil, nil, true, err
	}
	m, _ := ret.(*ordered.Map)
	m.Range(func(_, e any) bool {
		h, isMap := e.(*ordered.Map)
		if !isMap {
			return true
		}
		ch, _ := h.Value("changes").(*ordered.Map)
		switch {
		case ch.Len() > 0:
			modified = append(modified, h)
		case h.Value("result") == true:
			same = append(same, h)
		default:
			failed = append(failed, h)
		}
		return true
	})
	return modified, same, failed, true, nil
}

// holdEarly applies hold to an installed state that had nothing to
// install (the ValueError branch of pkg.installed).
func holdEarly(ctx context.Context, c *states.Call, res *states.Result, pkgs, sources any) *states.Result {
	modified, same, failed, ok, err := holdResults(ctx, c, "name", c.Arg("name"), "pkgs", pkgs, "sources", sources)
	if !ok {
		return res
	}
	if err != nil {
		return states.NewResult(c.Arg("name"), states.False, strerror(err))
	}
	for _, h := range modified {
		res.Comment += ".\n" + ordered.KeyString(h.Value("comment"))
		res.Result = triValue(h.Value("result"))
		res.Changes.Set(h.Value("name"), h.Value("changes"))
	}
	for _, h := range append(same, failed...) {
		res.Comment += ".\n" + ordered.KeyString(h.Value("comment"))
		res.Result = triValue(h.Value("result"))
	}
	return res
}

// holdNotes are the comments of a hold applied after an install, in
// the groups pkg.installed places apart.
type holdNotes struct {
	modified, same, failed []string
}

// holdAfter applies hold after an install, merging the hold changes into
// changes; errComment is set when the hold call itself failed.
func holdAfter(ctx context.Context, c *states.Call, p *plan, changes *ordered.Map) (notes holdNotes, errComment string) {
	var names []any
	for _, d := range p.desired {
		names = append(names, d.name)
	}
	modified, same, failed, ok, err := holdResults(ctx, c, "name", c.Arg("name"), "pkgs", names)
	if !ok {
		return notes, ""
	}
	if err != nil {
		return notes, strerror(err)
	}
	for _, h := range modified {
		name := h.Value("name")
		hc, _ := h.Value("changes").(*ordered.Map)
		notes.modified = append(notes.modified, ordered.KeyString(h.Value("comment")))
		if cur, isMap := changes.Value(name).(*ordered.Map); isMap {
			for _, k := range []string{"new", "old"} {
				s := ordered.KeyString(cur.Value(k))
				if s != "" {
					s += "\n"
				}
				cur.Set(k, s+ordered.KeyString(hc.Value(k)))
			}
		} else {
			changes.Set(name, ordered.FromPairs("new", ordered.KeyString(hc.Value("new"))))
		}
	}
	for _, h := range same {
		notes.same = append(notes.same, ordered.KeyString(h.Value("comment")))
	}
	for _, h := range failed {
		notes.failed = append(notes.failed, ordered.KeyString(h.Value("comment")))
	}
	return notes, ""
}

func triValue(v any) states.Tri {
	switch v {
	case true:
		return states.True
	case nil:
		return states.None
	}
	return states.False
}

// strerror is the text of an exception as str(exc) gives it.
func strerror(err error) string {
	var ee *modules.ExecutionError
	if errors.As(err, &ee) {
		return ee.Msg
	}
	return err.Error()
}
