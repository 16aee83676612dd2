package compile

import (
	"fmt"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
)

var (
	reqIn = map[string]bool{
		"require_in": true, "watch_in": true, "onfail_in": true, "onchanges_in": true,
		"use": true, "use_in": true, "prereq": true, "prereq_in": true,
	}
	reqInAll = map[string]bool{
		"require_in": true, "watch_in": true, "onfail_in": true, "onchanges_in": true,
		"use": true, "use_in": true, "prereq": true, "prereq_in": true,
		"require": true, "watch": true, "onfail": true, "onfail_stop": true, "onchanges": true,
	}
)

// extendSet accumulates the `__extend__` entries requisite_in builds: ID →
// state → argument list, plus __env__/__sls__.
type extendSet struct{ m *ordered.Map }

func (e extendSet) body(id string) *ordered.Map {
	b, ok := e.m.Value(id).(*ordered.Map)
	if !ok {
		b = ordered.New()
		e.m.Set(id, b)
	}
	return b
}

func (e extendSet) appendArg(id, state string, arg any) {
	b := e.body(id)
	l, _ := b.Value(state).([]any)
	b.Set(state, append(l, arg))
}

func (e extendSet) ensure(id, state string) {
	b := e.body(id)
	if !b.Has(state) {
		b.Set(state, []any{})
	}
}

// addReq appends {state: id} to the rkey requisite of target's _state,
// creating it on first use.
func (e extendSet) addReq(target, tstate, rkey, state, id string, src *ordered.Map) {
	e.ensure(target, tstate)
	b := e.body(target)
	b.Set("__env__", src.Value("__env__"))
	b.Set("__sls__", src.Value("__sls__"))
	l, _ := b.Value(tstate).([]any)
	found := false
	for _, item := range l {
		m, ok := item.(*ordered.Map)
		if !ok {
			continue
		}
		if k, v, _ := first(m); k == rkey {
			rl, _ := v.([]any)
			m.Set(rkey, append(rl, ordered.FromPairs(state, id)))
			found = true
		}
	}
	if !found {
		b.Set(tstate, append(l, ordered.FromPairs(rkey, []any{ordered.FromPairs(state, id)})))
	}
}

// RequisiteIn turns the *_in requisites, prereq and use into extensions
// of the targeted states and applies them (salt/state.py requisite_in).
func RequisiteIn(high *ordered.Map) []string {
	ext := extendSet{ordered.New()}
	var errs []string
	high.Range(func(idK, bv any) bool {
		b, ok := bv.(*ordered.Map)
		if !ok {
			return true
		}
		id := str(idK)
		b.Range(func(sk, run any) bool {
			if isDunder(sk) {
				return true
			}
			state := str(sk)
			list, _ := run.([]any)
			for _, arg := range list {
				am, ok := arg.(*ordered.Map)
				if !ok || am.Len() < 1 {
					continue
				}
				key, items, _ := first(am)
				if !reqIn[key] {
					continue
				}
				rkey, _, _ := strings.Cut(key, "_")
				switch it := items.(type) {
				case *ordered.Map:
					it.Range(func(sk2, nameV any) bool {
						_state, name := str(sk2), str(nameV)
						if i := strings.Index(_state, "."); i >= 0 {
							errs = append(errs, fmt.Sprintf("Invalid requisite in %s: %s for %s, in SLS '%s'. Requisites must not contain dots, did you mean '%s'?", rkey, _state, name, str(b.Value("__sls__")), _state[:i]))
							_state = _state[:i]
						}
						ext.addReq(name, _state, rkey, state, id, b)
						return true
					})
				case []any:
					errs = append(errs, reqInList(high, ext, b, id, state, key, rkey, it)...)
				}
			}
			return true
		})
		return true
	})
	var extList []any
	ext.m.Range(func(k, v any) bool {
		extList = append(extList, ordered.FromPairs(k, v))
		return true
	})
	if extList == nil {
		extList = []any{}
	}
	high.Set("__extend__", extList)
	return append(errs, ReconcileExtend(high, true)...)
}

// resolveBareReq turns a bare requisite_in reference into {state: id}: an
// ID names its first state; otherwise a `name` argument is searched.
func resolveBareReq(high *ordered.Map, ind any) (*ordered.Map, bool) {
	if b := body(high, ind); b != nil {
		if sk := stateKeys(b); len(sk) > 0 {
			return ordered.FromPairs(sk[0], ind), true
		}
	}
	var out *ordered.Map
	high.Range(func(idK, bv any) bool {
		b, ok := bv.(*ordered.Map)
		if !ok {
			return true
		}
		for _, st := range stateKeys(b) {
			for _, j := range argsOf(b, st) {
				if jm, ok := j.(*ordered.Map); ok {
					if n, ok := jm.Get("name"); ok && ordered.Equal(n, ind) {
						out = ordered.FromPairs(st, idK)
					}
				}
			}
		}
		return true
	})
	return out, out != nil
}

func reqInList(high *ordered.Map, ext extendSet, b *ordered.Map, id, state, key, rkey string, items []any) []string {
	var errs []string
	// Salt accumulates hinges across the items of one list.
	var hinges [][2]string
	for _, ind := range items {
		im, ok := ind.(*ordered.Map)
		if !ok {
			if im, ok = resolveBareReq(high, ind); !ok {
				continue
			}
		}
		if im.Len() < 1 {
			continue
		}
		pstate, pnameV, _ := first(im)
		pname := str(pnameV)
		if pstate == "sls" {
			hinges = findSLSIDs(pnameV, high)
		} else {
			hinges = append(hinges, [2]string{pname, pstate})
		}
		if i := strings.Index(pstate, "."); i >= 0 {
			errs = append(errs, fmt.Sprintf("Invalid requisite in %s: %s for %s, in SLS '%s'. Requisites must not contain dots, did you mean '%s'?", rkey, pstate, pname, str(b.Value("__sls__")), pstate[:i]))
		}
		for _, h := range hinges {
			ext.hinge(high, b, id, state, key, rkey, h[0], h[1])
		}
	}
	return errs
}

// hinge applies one requisite_in reference to (name, _state): prereq and
// use touch the declaring state, the *_in forms the target.
func (e extendSet) hinge(high, b *ordered.Map, id, state, key, rkey, name, _state string) {
	switch key {
	case "prereq_in":
		e.appendArg(id, state, ordered.FromPairs("prerequired", []any{ordered.FromPairs(_state, name)}))
	case "prereq":
		for _, x := range FindName(name, _state, high, true) {
			e.appendArg(x[0], x[1], ordered.FromPairs("prerequired", []any{ordered.FromPairs(state, id)}))
		}
		return
	case "use_in":
		for _, x := range FindName(name, _state, high, true) {
			e.copyArgs(x[0], x[1], argsOf(body(high, id), state), stateArgs(x[0], _state, high))
		}
		return
	case "use":
		for _, x := range FindName(name, _state, high, true) {
			e.copyArgs(id, state, argsOf(body(high, x[0]), x[1]), stateArgs(id, state, high))
		}
		return
	}
	e.addReq(name, _state, rkey, state, id, b)
}

// copyArgs appends the copyable arguments of src to id's state (use).
func (e extendSet) copyArgs(id, state string, src []any, ignore map[string]bool) {
	if id == "" {
		return
	}
	e.ensure(id, state)
	for _, a := range src {
		if copyable(a, ignore) {
			e.appendArg(id, state, a)
		}
	}
}

// copyable reports whether a `use` argument is copied: a one-key option
// that is not a requisite, not name/names, and not set on the user.
func copyable(a any, ignore map[string]bool) bool {
	m, ok := a.(*ordered.Map)
	if !ok || m.Len() != 1 {
		return false
	}
	k, _, _ := first(m)
	return !reqInAll[k] && !ignore[k] && k != "name" && k != "names"
}
