package compile

import (
	"context"
	"fmt"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
)

// envTop is the rendered top file of one saltenv.
type envTop struct {
	env string
	top *ordered.Map
}

// GetTop renders the top file of every saltenv and merges them with the
// default "merge" strategy (get_tops, _merge_tops_merge): the base top is
// authoritative, and another env's top only contributes its own section
// when base did not define it. A top that fails to render counts as empty,
// as get_top logs and returns {}; the error is kept in TopErrors.
func (h *HighState) GetTop(ctx context.Context) (*ordered.Map, error) {
	tops, failed, err := h.renderTops(ctx)
	if err != nil || failed {
		return ordered.New(), err
	}
	top := ordered.New()
	for _, base := range []bool{true, false} {
		for _, t := range tops {
			if (t.env == "base") != base {
				continue
			}
			if err := mergeTop(top, t, base); err != nil {
				return nil, err
			}
		}
	}
	return top, nil
}

func (h *HighState) renderTops(ctx context.Context) (tops []envTop, failed bool, err error) {
	envs := h.Files.Envs()
	switch {
	case h.TopSaltenv != "":
		envs = []string{h.TopSaltenv}
	case h.Saltenv != "":
		envs = []string{h.Saltenv}
	}
	topFile := "top.sls"
	if h.TopFile != "" {
		topFile = h.TopFile
	}
	for _, env := range envs {
		src, ok, err := h.Files.ReadFile(ctx, topFile, env)
		if err != nil {
			return nil, false, err
		}
		if !ok {
			continue
		}
		data, err := h.Render(ctx, src, topFile, env, "top")
		if err != nil {
			h.TopErrors = append(h.TopErrors, "Rendering Primary Top file failed, render error:\n"+err.Error())
			h.log().Error("Unable to render top file: " + err.Error())
			return nil, true, nil
		}
		m, _ := data.(*ordered.Map)
		if m == nil {
			m = ordered.New()
		}
		m.Delete("include")
		tops = append(tops, envTop{env, m})
	}
	return tops, false, nil
}

// mergeTop merges the sections of one top file into top: all of them for
// the base top, only its own not yet defined section for another env's.
func mergeTop(top *ordered.Map, t envTop, base bool) error {
	var err error
	t.top.Range(func(env, targets any) bool {
		if !base && (str(env) != t.env || top.Has(env)) {
			return true
		}
		tm, ok := targets.(*ordered.Map)
		if !ok {
			//lint:ignore ST1005 Salt's exact message
			err = fmt.Errorf("Unable to render top file. No targets found.")
			return false
		}
		dst, _ := top.Value(env).(*ordered.Map)
		if dst == nil {
			dst = ordered.New()
			top.Set(env, dst)
		}
		tm.Range(func(k, v any) bool { dst.Set(k, v); return true })
		return true
	})
	return err
}

// VerifyTops checks the merged top data (verify_tops).
func VerifyTops(top *ordered.Map) []string {
	var errs []string
	top.Range(func(envK, matches any) bool {
		env, isStr := envK.(string)
		if env == "include" {
			return true
		}
		if !isStr {
			errs = append(errs, fmt.Sprintf("Environment %s in top file is not formed as a string", str(envK)))
		}
		if isStr && env == "" {
			errs = append(errs, "Empty saltenv statement in top file")
		}
		mm, ok := matches.(*ordered.Map)
		if !ok {
			errs = append(errs, fmt.Sprintf("The top file matches for saltenv %s are not formatted as a dict", str(envK)))
			return true
		}
		mm.Range(func(_, slsmods any) bool {
			l, ok := slsmods.([]any)
			if !ok {
				errs = append(errs, "Malformed topfile (state declarations not formed as a list)")
				return true
			}
			for _, s := range l {
				switch x := s.(type) {
				case *ordered.Map:
					x.Range(func(_, v any) bool {
						if !truthyVal(v) {
							errs = append(errs, fmt.Sprintf("Improperly formatted top file matcher in saltenv %s: %s file", py.Repr(x), str(v)))
						}
						return true
					})
				case string:
					if x == "" {
						errs = append(errs, fmt.Sprintf("Environment %s contains an empty sls index", str(envK)))
					}
				}
			}
			return true
		})
		return true
	})
	return errs
}

func truthyVal(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case string:
		return x != ""
	case bool:
		return x
	case int:
		return x != 0
	case []any:
		return len(x) > 0
	case *ordered.Map:
		return x.Len() > 0
	}
	return true
}

// TopMatches returns the SLS names this minion gets from the top data
// (top_matches). Items that are not strings are passed through to the
// caller as-is only when they are env mappings.
func (h *HighState) TopMatches(top *ordered.Map) (*Matches, error) {
	m := &Matches{}
	var ferr error
	top.Range(func(envK, body any) bool {
		env := str(envK)
		if h.Saltenv != "" && env != h.Saltenv {
			return true
		}
		bm, ok := body.(*ordered.Map)
		if !ok {
			return true
		}
		bm.Range(func(tgt, data any) bool {
			items, ok := data.([]any)
			if s, isStr := data.(string); isStr {
				items, ok = []any{s}, true
			}
			if !ok {
				return true
			}
			matcher := "compound"
			for _, it := range items {
				if im, ok := it.(*ordered.Map); ok {
					if v, ok := im.Get("match"); ok {
						matcher = str(v)
					}
				}
			}
			hit, err := h.Match(tgt, matcher)
			if err != nil {
				ferr = err
				return false
			}
			if !hit {
				return true
			}
			m.ensure(env)
			for _, it := range items {
				switch x := it.(type) {
				case string:
					m.add(env, x)
				case *ordered.Map:
					k, v, ok := first(x)
					if !ok || !h.hasEnv(k) {
						continue
					}
					m.add(k, str(v))
				default:
					ferr = &TypeError{Msg: fmt.Sprintf("argument of type '%s' is not iterable", py.TypeName(it))}
					return false
				}
			}
			return ferr == nil
		})
		return ferr == nil
	})
	return m, ferr
}

// TypeError is a Python TypeError that Salt lets escape (a crash of the
// execution function, retcode 1).
type TypeError struct{ Msg string }

func (e *TypeError) Error() string { return e.Msg }
