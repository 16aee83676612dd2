package compile

import (
	"fmt"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/keyword"
)

// High data is an *ordered.Map from ID to a body mapping of state module
// to argument list, plus `__sls__` and `__env__`, with the special
// top-level keys `__extend__` (a list of mappings) and `__exclude__`.

func isDunder(k any) bool {
	s, ok := k.(string)
	return ok && strings.HasPrefix(s, "__")
}

func body(high *ordered.Map, id any) *ordered.Map {
	b, _ := high.Value(id).(*ordered.Map)
	return b
}

func argsOf(b *ordered.Map, state string) []any {
	l, _ := b.Value(state).([]any)
	return l
}

// stateKeys lists the non-dunder keys of a body.
func stateKeys(b *ordered.Map) []string {
	var out []string
	for _, k := range b.Keys() {
		if isDunder(k) {
			continue
		}
		out = append(out, str(k))
	}
	return out
}

// FindName scans high for the IDs that a name refers to, as (ID, state)
// pairs (salt/state.py find_name).
func FindName(name, state string, high *ordered.Map, strict bool) [][2]string {
	var out [][2]string
	check := true
	if strict {
		b := body(high, name)
		check = b != nil && b.Has(state)
	}
	if high.Has(name) && check {
		return append(out, [2]string{name, state})
	}
	if state == "sls" {
		high.Range(func(id, v any) bool {
			if b, ok := v.(*ordered.Map); ok && str(b.Value("__sls__")) == name {
				if ks := stateKeys(b); len(ks) > 0 {
					out = append(out, [2]string{str(id), b.Keys()[0].(string)})
				}
			}
			return true
		})
		return out
	}
	high.Range(func(id, v any) bool {
		b, ok := v.(*ordered.Map)
		if !ok || !b.Has(state) {
			return true
		}
		for _, arg := range argsOf(b, state) {
			m, ok := arg.(*ordered.Map)
			if !ok || m.Len() != 1 {
				continue
			}
			if _, val, _ := first(m); ordered.Equal(val, name) {
				out = append(out, [2]string{str(id), state})
			}
		}
		return true
	})
	return out
}

// stateArgs returns the argument names given to id's state (state_args).
func stateArgs(id, state string, high *ordered.Map) map[string]bool {
	out := map[string]bool{}
	b := body(high, id)
	if b == nil {
		return out
	}
	for _, arg := range argsOf(b, state) {
		if m, ok := arg.(*ordered.Map); ok && m.Len() == 1 {
			k, _, _ := first(m)
			out[k] = true
		}
	}
	return out
}

// findSLSIDs lists (ID, state) pairs of the states of an SLS (find_sls_ids).
func findSLSIDs(sls any, high *ordered.Map) [][2]string {
	var out [][2]string
	high.Range(func(id, v any) bool {
		b, ok := v.(*ordered.Map)
		if !ok || !ordered.Equal(b.Value("__sls__"), sls) {
			return true
		}
		for _, st := range stateKeys(b) {
			out = append(out, [2]string{str(id), st})
		}
		return true
	})
	return out
}

// ReconcileExtend applies `__extend__` to high (salt/state.py
// reconcile_extend), returning Salt's errors for extensions of IDs that
// are not part of the run.
func ReconcileExtend(high *ordered.Map, strict bool) []string {
	var errs []string
	extV, ok := high.Get("__extend__")
	if !ok {
		return nil
	}
	high.Delete("__extend__")
	ext, _ := extV.([]any)
	for _, chunk := range ext {
		cm, ok := chunk.(*ordered.Map)
		if !ok {
			continue
		}
		cm.Range(func(nameK, bv any) bool {
			name := str(nameK)
			b, ok := bv.(*ordered.Map)
			if !ok {
				return true
			}
			sk := stateKeys(b)
			if len(sk) == 0 {
				return true
			}
			stateType := sk[0]
			if hb := body(high, name); hb == nil || !hb.Has(stateType) {
				ids := FindName(name, stateType, high, strict)
				if len(ids) != 1 {
					env, sls := "base", "base"
					if v, ok := b.Get("__env__"); ok {
						env = str(v)
					}
					if v, ok := b.Get("__sls__"); ok {
						sls = str(v)
					}
					errs = append(errs, fmt.Sprintf("Cannot extend ID '%[1]s' in '%[2]s:%[3]s'. It is not part of the high state.\n"+
						"This is likely due to a missing include statement or an incorrectly typed ID.\n"+
						"Ensure that a state with an ID of '%[1]s' is available\nin environment '%[2]s' and to SLS '%[3]s'", name, env, sls))
					return true
				}
				name = ids[0][0]
			}
			if slsExcluded(high, b.Value("__sls__")) {
				return true
			}
			hb := body(high, name)
			b.Range(func(sk, run any) bool {
				state := str(sk)
				if isDunder(sk) {
					return true
				}
				if !hb.Has(state) {
					hb.Set(state, run)
					return true
				}
				hb.Set(state, extendArgs(argsOf(hb, state), run))
				return true
			})
			return true
		})
	}
	return errs
}

func slsExcluded(high *ordered.Map, sls any) bool {
	ex, _ := high.Value("__exclude__").([]any)
	for _, e := range ex {
		switch x := e.(type) {
		case string:
			if ordered.Equal(x, sls) {
				return true
			}
		case *ordered.Map:
			if v, ok := x.Get("sls"); ok && modulesTruthy(v) && ordered.Equal(v, sls) {
				return true
			}
		}
	}
	return false
}

func modulesTruthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case string:
		return x != ""
	case bool:
		return x
	}
	return true
}

// extendArgs merges extension arguments into a state's list: a function
// replaces the function, a requisite list is appended to, another option
// replaces the option, and `name` replaces `names`.
func extendArgs(dst []any, run any) []any {
	runL, _ := run.([]any)
	for _, arg := range runL {
		update := false
		for hind := 0; hind < len(dst); hind++ {
			val := dst[hind]
			if as, ok := arg.(string); ok {
				if _, ok := val.(string); ok {
					dst[hind] = as
					update = true
				}
				continue
			}
			am, ok1 := arg.(*ordered.Map)
			vm, ok2 := val.(*ordered.Map)
			if !ok1 || !ok2 {
				continue
			}
			argfirst, argval, _ := first(am)
			vfirst, vval, _ := first(vm)
			if argfirst == vfirst {
				if keyword.IsRequisite(argfirst) {
					l, _ := vval.([]any)
					add, _ := argval.([]any)
					vm.Set(vfirst, append(append([]any(nil), l...), add...))
				} else {
					dst[hind] = am
				}
				update = true
			}
			if argfirst == "name" && vfirst == "names" {
				dst[hind] = am
			}
		}
		if !update {
			dst = append(dst, arg)
		}
	}
	return dst
}

// ApplyExclude removes the states named by `__exclude__` (apply_exclude).
func ApplyExclude(high *ordered.Map) {
	exV, ok := high.Get("__exclude__")
	if !ok {
		return
	}
	high.Delete("__exclude__")
	ex, _ := exV.([]any)
	var exSLS []string
	exID := map[string]bool{}
	for _, e := range ex {
		switch x := e.(type) {
		case string:
			exSLS = append(exSLS, x)
		case *ordered.Map:
			if x.Len() != 1 {
				continue
			}
			k, v, _ := first(x)
			switch k {
			case "sls":
				exSLS = append(exSLS, str(v))
			case "id":
				exID[str(v)] = true
			}
		}
	}
	if len(exSLS) > 0 {
		high.Range(func(id, v any) bool {
			if isDunder(id) {
				return true
			}
			b, _ := v.(*ordered.Map)
			sls, _ := b.Value("__sls__").(string)
			if sls == "" {
				return true
			}
			for _, pat := range exSLS {
				if Fnmatch(sls, pat) {
					exID[str(id)] = true
				}
			}
			return true
		})
	}
	for _, id := range high.Keys() {
		if exID[str(id)] {
			high.Delete(id)
		}
	}
}
