package compile

import (
	"fmt"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
)

// VerifyHigh checks that high data is well formed (salt/state.py
// State.verify_high), including Salt's direct recursive requisite check.
func VerifyHigh(high *ordered.Map) []string {
	var errs []string
	reqs := map[string]map[string]string{}
	high.Range(func(nameK, bv any) bool {
		if isDunder(nameK) {
			return true
		}
		b, isMap := bv.(*ordered.Map)
		if _, ok := nameK.(string); !ok {
			sls := "None"
			if isMap {
				sls = str(b.Value("__sls__"))
			}
			errs = append(errs, fmt.Sprintf("ID '%s' in SLS '%s' is not formed as a string, but is a %s. It may need to be quoted.",
				str(nameK), sls, py.TypeName(nameK)))
		}
		if !isMap {
			errs = append(errs, fmt.Sprintf("The type %s in %s is not formatted as a dictionary", str(nameK), py.Repr(bv)))
			return true
		}
		name := str(nameK)
		sls := str(b.Value("__sls__"))
		b.Range(func(sk, run any) bool {
			if isDunder(sk) {
				return true
			}
			state := str(sk)
			if run == nil {
				errs = append(errs, fmt.Sprintf("ID '%s' in SLS '%s' contains a short declaration (%s) with a trailing colon. When not passing any arguments to a state, the colon must be omitted.", name, sls, state))
				return true
			}
			list, ok := run.([]any)
			if !ok {
				errs = append(errs, fmt.Sprintf("State '%s' in SLS '%s' is not formed as a list", name, sls))
				return true
			}
			errs = append(errs, verifyArgs(name, sls, state, list, reqs)...)
			return true
		})
		return true
	})
	return errs
}

func verifyArgs(name, sls, state string, list []any, reqs map[string]map[string]string) []string {
	var errs []string
	fun := 0
	if strings.Contains(state, ".") {
		fun++
	}
	for _, arg := range list {
		switch a := arg.(type) {
		case string:
			fun++
			if strings.Contains(strings.TrimSpace(a), " ") {
				errs = append(errs, fmt.Sprintf("The function \"%s\" in state \"%s\" in SLS \"%s\" has whitespace, a function with whitespace is not supported, perhaps this is an argument that is missing a \":\"", a, name, sls))
			}
		case *ordered.Map:
			argfirst, val, _ := first(a)
			if argfirst == "names" {
				if _, ok := val.([]any); !ok {
					errs = append(errs, fmt.Sprintf("The 'names' argument in state '%s' in SLS '%s' needs to be formed as a list", name, sls))
				}
			}
			switch argfirst {
			case "require", "watch", "prereq", "onchanges":
			default:
				continue
			}
			rl, ok := val.([]any)
			if !ok {
				errs = append(errs, fmt.Sprintf("The %s statement in state '%s' in SLS '%s' needs to be formed as a list", argfirst, name, sls))
			} else {
				reqs[name] = map[string]string{"state": state}
				errs = append(errs, verifyReqs(name, sls, state, rl, reqs)...)
			}
			if a.Len() != 1 {
				errs = append(errs, fmt.Sprintf("Multiple dictionaries defined in argument of state '%s' in SLS '%s'", name, sls))
			}
		}
	}
	if fun == 0 {
		if state == "require" || state == "watch" {
			return errs
		}
		errs = append(errs, fmt.Sprintf("No function declared in state '%s' in SLS '%s'", name, sls))
	} else if fun > 1 {
		var funs []string
		if _, f, ok := strings.Cut(state, "."); ok {
			funs = append(funs, f)
		}
		for _, arg := range list {
			if s, ok := arg.(string); ok {
				funs = append(funs, s)
			}
		}
		errs = append(errs, fmt.Sprintf("Too many functions declared in state '%s' in SLS '%s'. Please choose one of the following: %s", name, sls, strings.Join(funs, ", ")))
	}
	return errs
}

func verifyReqs(name, sls, state string, rl []any, reqs map[string]map[string]string) []string {
	var errs []string
	for _, req := range rl {
		var rm *ordered.Map
		switch r := req.(type) {
		case string:
			rm = ordered.FromPairs("id", r)
		case *ordered.Map:
			rm = r
		default:
			errs = append(errs, fmt.Sprintf("Requisite declaration %s in SLS %s is not formed as a single key dictionary", py.Repr(req), sls))
			continue
		}
		reqKey, reqVal, _ := first(rm)
		if i := strings.Index(reqKey, "."); i >= 0 {
			errs = append(errs, fmt.Sprintf("Invalid requisite type '%s' in state '%s', in SLS '%s'. Requisite types must not contain dots, did you mean '%s'?", reqKey, name, sls, reqKey[:i]))
		}
		switch reqVal.(type) {
		case []any, *ordered.Map:
			errs = append(errs, fmt.Sprintf("Illegal requisite \"%s\", please check your syntax.\n", py.Repr(reqVal)))
			continue
		}
		rv := str(reqVal)
		reqs[name][rv] = reqKey
		if other, ok := reqs[rv]; ok {
			if back, ok := other[name]; ok && back == state && other["state"] == reqs[name][rv] {
				errs = append(errs, fmt.Sprintf("A recursive requisite was found, SLS \"%s\" ID \"%s\" ID \"%s\"", sls, name, rv))
			}
		}
	}
	return errs
}
