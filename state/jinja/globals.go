package jinja

import (
	"sort"

	"github.com/brinesalt/brine/internal/ordered"
)

// builtinGlobals are Jinja's default globals plus Salt's additions
// (salt/utils/templates.py: odict, raise).
var builtinGlobals = map[string]any{}

func init() {
	for name, fn := range map[string]func(r *runner, args []any, kw *ordered.Map) (any, error){
		"range":     builtinRange,
		"dict":      builtinDict,
		"odict":     builtinDict,
		"namespace": builtinNamespace,
		"raise":     builtinRaise,
		"cycler":    builtinCycler,
		"joiner":    builtinJoiner,
		"ifelse":    builtinIfelse,
	} {
		builtinGlobals[name] = &builtinFunc{name: name, fn: fn}
	}
}

func sortStrings(s []string) { sort.Strings(s) }

func intArgs(name string, args []any) ([]int, error) {
	out := make([]int, len(args))
	for i, a := range args {
		n, ok := asInt(a)
		if !ok {
			if u, isU := a.(*undefined); isU {
				return nil, u.err()
			}
			return nil, typeErr("'%s' object cannot be interpreted as an integer", typeName(a))
		}
		out[i] = n
	}
	return out, nil
}

// maxRange is the sandbox's MAX_RANGE: a bigger range() is refused.
const maxRange = 100000

func builtinRange(_ *runner, args []any, _ *ordered.Map) (any, error) {
	n, err := intArgs("range", args)
	if err != nil {
		return nil, err
	}
	start, stop, step := 0, 0, 1
	switch len(n) {
	case 1:
		stop = n[0]
	case 2:
		start, stop = n[0], n[1]
	case 3:
		start, stop, step = n[0], n[1], n[2]
	default:
		return nil, typeErr("range expected at most 3 arguments, got %d", len(n))
	}
	if step == 0 {
		return nil, runtimeErr("range() arg 3 must not be zero")
	}
	var out []any
	for i := start; (step > 0 && i < stop) || (step < 0 && i > stop); i += step {
		if len(out) >= maxRange {
			return nil, runtimeErr("Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).")
		}
		out = append(out, i)
	}
	return newList(out), nil
}

func builtinDict(r *runner, args []any, kw *ordered.Map) (any, error) {
	m := ordered.New()
	if len(args) > 1 {
		return nil, typeErr("dict expected at most 1 argument, got %d", len(args))
	}
	if len(args) == 1 {
		if err := r.dictUpdate(m, args[0]); err != nil {
			return nil, err
		}
	}
	kw.Range(func(k, v any) bool { m.Set(k, v); return true })
	return m, nil
}

// dictUpdate merges a mapping or a sequence of pairs into m.
func (r *runner) dictUpdate(m *ordered.Map, src any) error {
	switch s := src.(type) {
	case *ordered.Map:
		s.Range(func(k, v any) bool { setKey(m, k, v); return true })
		return nil
	case *undefined:
		return s.err()
	}
	items, err := r.iterate(src)
	if err != nil {
		return err
	}
	for i, it := range items {
		pair, ok := seqItems(it)
		if !ok {
			if s, isStr := it.(string); isStr && len([]rune(s)) == 2 {
				rs := []rune(s)
				setKey(m, string(rs[0]), string(rs[1]))
				continue
			}
			return typeErr("cannot convert dictionary update sequence element #%d to a sequence", i)
		}
		if len(pair) != 2 {
			return runtimeErr("dictionary update sequence element #%d has length %d; 2 is required", i, len(pair))
		}
		if !hashable(pair[0]) {
			return typeErr("unhashable type: '%s'", typeName(pair[0]))
		}
		setKey(m, pair[0], pair[1])
	}
	return nil
}

func builtinNamespace(r *runner, args []any, kw *ordered.Map) (any, error) {
	m := ordered.New()
	for _, a := range args {
		if err := r.dictUpdate(m, a); err != nil {
			return nil, err
		}
	}
	kw.Range(func(k, v any) bool { m.Set(k, v); return true })
	return &namespace{attrs: m}, nil
}

func builtinRaise(r *runner, args []any, _ *ordered.Map) (any, error) {
	msg := ""
	if len(args) > 0 {
		var err error
		if msg, err = r.toStr(args[0]); err != nil {
			return nil, err
		}
	}
	// jinja2.exceptions.TemplateError is not one of the classes Salt maps
	// to "Jinja syntax error", so it is reported as "Jinja error".
	return nil, runtimeErr("%s", msg)
}

// cyclerObj is jinja2.utils.Cycler.
type cyclerObj struct {
	items []any
	pos   int
}

func builtinCycler(_ *runner, args []any, _ *ordered.Map) (any, error) {
	if len(args) == 0 {
		return nil, runtimeErr("at least one item has to be provided")
	}
	return &cyclerObj{items: args}, nil
}

// joinerObj is jinja2.utils.Joiner.
type joinerObj struct {
	sep  string
	used bool
}

func (j *joinerObj) call(_ *runner, _ []any, _ *ordered.Map) (any, error) {
	if !j.used {
		j.used = true
		return "", nil
	}
	return j.sep, nil
}

func builtinJoiner(r *runner, args []any, _ *ordered.Map) (any, error) {
	sep := ", "
	if len(args) > 0 {
		s, err := r.toStr(args[0])
		if err != nil {
			return nil, err
		}
		sep = s
	}
	return &joinerObj{sep: sep}, nil
}

// builtinIfelse is Salt's ifelse global (salt/modules/match.py), which
// needs the compound matcher: it is delegated to the execution module
// function match.ifelse through the Salt caller.
func builtinIfelse(r *runner, args []any, kw *ordered.Map) (any, error) {
	if r.opts.Salt == nil {
		return nil, runtimeErr("ifelse needs the Salt execution modules")
	}
	return (&saltProxy{name: "match.ifelse"}).call(r, args, kw)
}
