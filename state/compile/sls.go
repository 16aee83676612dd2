package compile

import (
	"context"
	"fmt"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
)

// RenderHighstate renders the matched SLS files into one high data
// mapping (render_highstate). The errors are compile errors.
func (h *HighState) RenderHighstate(ctx context.Context, matches *Matches) (*ordered.Map, []string) {
	high := ordered.New()
	var all []string
	mods := map[string]bool{}
	for _, env := range matches.Envs {
		for _, slsMatch := range matches.SLS[env] {
			var files []string
			if h.hasEnv(env) {
				files = Filter(h.availFor(env), slsMatch)
			} else {
				all = append(all, fmt.Sprintf("No matching salt environment for environment '%s' found", env))
			}
			if len(files) == 0 {
				files = []string{slsMatch}
			}
			for _, sls := range files {
				if mods[env+":"+sls] {
					continue
				}
				state, errs := h.renderState(ctx, sls, env, mods, matches)
				if state != nil && state.Len() > 0 {
					errs = mergeIncluded(high, state, errs)
				}
				this := fmt.Sprintf("SLS %s in saltenv", slsMatch)
				for i, e := range errs {
					if strings.Contains(e, "is not available") && strings.Contains(e, this) {
						errs[i] = fmt.Sprintf("No matching sls found for '%s' in env '%s'", slsMatch, env)
					}
				}
				all = append(all, errs...)
			}
		}
	}
	cleanDuplicateExtends(high)
	return high, all
}

func cleanDuplicateExtends(high *ordered.Map) {
	ext, ok := high.Value("__extend__").([]any)
	if !ok {
		return
	}
	var out []any
	for _, e := range ext {
		em, ok := e.(*ordered.Map)
		if !ok {
			continue
		}
		em.Range(func(k, v any) bool {
			item := ordered.FromPairs(k, v)
			for _, o := range out {
				if ordered.Equal(o, item) {
					return true
				}
			}
			out = append(out, item)
			return true
		})
	}
	high.Set("__extend__", out)
}

// mergeIncluded merges state into high, reporting IDs defined twice with
// different bodies (merge_included_states).
func mergeIncluded(high, state *ordered.Map, errs []string) []string {
	for _, k := range []string{"__extend__", "__exclude__"} {
		if v, ok := state.Get(k); ok {
			l, _ := high.Value(k).([]any)
			add, _ := v.([]any)
			high.Set(k, append(append([]any(nil), l...), add...))
			state.Delete(k)
		}
	}
	state.Range(func(id, v any) bool {
		if old, ok := high.Get(id); ok && !ordered.Equal(old, v) {
			ob, _ := old.(*ordered.Map)
			nb, _ := v.(*ordered.Map)
			errs = append(errs, fmt.Sprintf("Detected conflicting IDs, SLS IDs need to be globally unique.\n    The conflicting ID is '%s' and is found in SLS '%s:%s' and SLS '%s:%s'",
				str(id), str(ob.Value("__env__")), str(ob.Value("__sls__")), str(nb.Value("__env__")), str(nb.Value("__sls__"))))
		}
		return true
	})
	state.Range(func(id, v any) bool { high.Set(id, v); return true })
	return errs
}

// renderState renders one SLS and, recursively, its includes (render_state).
func (h *HighState) renderState(ctx context.Context, sls, saltenv string, mods map[string]bool, matches *Matches) (*ordered.Map, []string) {
	var errs []string
	rel, src, ok, err := h.Files.FindSLS(ctx, sls, saltenv)
	if err != nil {
		return ordered.New(), []string{err.Error()}
	}
	if !ok {
		return ordered.New(), []string{fmt.Sprintf("Specified SLS %s in saltenv %s is not available on the salt master or through a configured fileserver", sls, saltenv)}
	}
	data, rerr := h.Render(ctx, src, rel, saltenv, sls)
	if rerr != nil {
		msg := renderMsg(saltenv, sls, rerr)
		h.log().Log(ctx, levelCritical, msg)
		errs = append(errs, msg)
	}
	mods[saltenv+":"+sls] = true
	if !truthyVal(data) {
		return ordered.New(), errs
	}
	state, isMap := data.(*ordered.Map)
	if !isMap {
		return ordered.New(), append(errs, fmt.Sprintf("SLS %s does not render to a dictionary", sls))
	}
	var include []any
	if inc, ok := state.Get("include"); ok {
		if l, ok := inc.([]any); ok {
			include = l
			state.Delete("include")
		} else {
			errs = append(errs, fmt.Sprintf("Include Declaration in SLS %s is not formed as a list", sls))
		}
	}
	errs = handleExtend(state, sls, saltenv, errs)
	errs = handleExclude(state, sls, errs)
	errs = handleStateDecls(state, sls, saltenv, errs)
	for _, inc := range include {
		errs = h.include(ctx, state, inc, sls, saltenv, rel, mods, matches, errs)
	}
	h.handleIorder(state)
	return state, errs
}

func (h *HighState) include(ctx context.Context, state *ordered.Map, inc any, sls, saltenv, rel string, mods map[string]bool, matches *Matches, errs []string) []string {
	envKey := saltenv
	incSLS := str(inc)
	if m, ok := inc.(*ordered.Map); ok && m.Len() > 0 {
		k := m.Keys()[m.Len()-1]
		envKey, incSLS = str(k), str(m.Value(k))
	}
	if !h.hasEnv(envKey) && envKey != "_xenv" {
		return append(errs, fmt.Sprintf("Nonexistent saltenv '%s' found in include of '%s' within SLS '%s:%s'", envKey, incSLS, saltenv, sls))
	}
	if strings.HasPrefix(incSLS, ".") {
		g := relInclude.FindStringSubmatch(incSLS)
		levels, rest := len(g[1]), g[2]
		comps := strings.Split(sls, ".")
		if strings.HasSuffix(rel, "/init.sls") || rel == "init.sls" {
			comps = append(comps, "init")
		}
		if levels > len(comps) {
			return append(errs, fmt.Sprintf("Attempted relative include of '%s' within SLS '%s:%s' goes beyond top level package ", incSLS, saltenv, sls))
		}
		incSLS = strings.Join(append(append([]string(nil), comps[:len(comps)-levels]...), rest), ".")
	}
	var resolved []string
	if envKey != "_xenv" {
		_, inMatches := matches.SLS[envKey]
		if inMatches || len(Filter(h.availFor(envKey), incSLS)) > 0 {
			resolved = []string{envKey}
		}
	} else {
		for _, e := range matches.Envs {
			if len(Filter(h.availFor(e), incSLS)) > 0 {
				resolved = append(resolved, e)
			}
		}
	}
	inResolved := false
	for _, e := range resolved {
		inResolved = inResolved || e == saltenv
	}
	if len(resolved) != 1 && !inResolved {
		if len(resolved) == 0 {
			where := envKey
			if envKey == "_xenv" {
				where = strings.Join(matches.Envs, ", ")
			}
			return append(errs, fmt.Sprintf("Unknown include: Specified SLS %s: %s is not available on the salt master in saltenv(s): %s ", envKey, incSLS, where))
		}
		return append(errs, fmt.Sprintf("Ambiguous include: Specified SLS %s: %s is available on the salt master in multiple available saltenvs: %s", envKey, incSLS, strings.Join(resolved, ", ")))
	}
	targets := Filter(h.availFor(saltenv), incSLS)
	if len(targets) == 0 {
		targets = []string{incSLS}
	}
	rEnv := saltenv
	if len(resolved) == 1 {
		rEnv = resolved[0]
	}
	for _, t := range targets {
		if mods[rEnv+":"+t] {
			continue
		}
		nstate, err := h.renderState(ctx, t, rEnv, mods, matches)
		if nstate != nil && nstate.Len() > 0 {
			errs = mergeIncluded(state, nstate, errs)
		}
		errs = append(errs, err...)
	}
	return errs
}

// handleIorder gives every state without an order the next automatic
// order (state_auto_order).
func (h *HighState) handleIorder(state *ordered.Map) {
	if !h.AutoOrder {
		return
	}
	state.Range(func(_, bv any) bool {
		b, ok := bv.(*ordered.Map)
		if !ok {
			return true
		}
		b.Range(func(sk, run any) bool {
			s, ok := sk.(string)
			if !ok || strings.HasPrefix(s, "_") {
				return true
			}
			l, ok := run.([]any)
			if !ok {
				return true
			}
			for _, arg := range l {
				if m, ok := arg.(*ordered.Map); ok && m.Len() > 0 {
					if k, _, _ := first(m); k == "order" {
						return true
					}
				}
			}
			b.Set(sk, append(l, ordered.FromPairs("order", h.iorder)))
			h.iorder++
			return true
		})
		return true
	})
}

// handleStateDecls splits `mod.fun` keys into `mod: [..., fun]` and adds
// __sls__ and __env__ (_handle_state_decls).
func handleStateDecls(state *ordered.Map, sls, saltenv string, errs []string) []string {
	for _, name := range state.Keys() {
		v := state.Value(name)
		b, ok := v.(*ordered.Map)
		if !ok {
			if name == "__extend__" || name == "__exclude__" {
				continue
			}
			if s, ok := v.(string); ok && strings.Contains(s, ".") {
				comps := strings.Split(s, ".")
				state.Set(name, ordered.FromPairs("__sls__", sls, "__env__", saltenv, comps[0], []any{comps[1]}))
				continue
			}
			errs = append(errs, fmt.Sprintf("ID %s in SLS %s is not a dictionary", str(name), sls))
			continue
		}
		skeys := map[string]bool{}
		for _, k := range b.Keys() {
			key, isStr := k.(string)
			if isStr && strings.HasPrefix(key, "_") {
				continue
			}
			l, ok := b.Value(k).([]any)
			if !ok {
				continue
			}
			if isStr && strings.Contains(key, ".") {
				comps := strings.Split(key, ".")
				if skeys[comps[0]] {
					errs = append(errs, fmt.Sprintf("ID '%s' in SLS '%s' contains multiple state declarations of the same type", str(name), sls))
					continue
				}
				b.Delete(k)
				b.Set(comps[0], append(l, comps[1]))
				skeys[comps[0]] = true
				continue
			}
			skeys[str(k)] = true
		}
		if !b.Has("__sls__") {
			b.Set("__sls__", sls)
		}
		if !b.Has("__env__") {
			b.Set("__env__", saltenv)
		}
	}
	return errs
}

// handleExtend moves `extend:` to `__extend__` (_handle_extend).
func handleExtend(state *ordered.Map, sls, saltenv string, errs []string) []string {
	v, ok := state.Get("extend")
	if !ok {
		return errs
	}
	state.Delete("extend")
	ext, ok := v.(*ordered.Map)
	if !ok {
		return append(errs, fmt.Sprintf("Extension value in SLS '%s' is not a dictionary", sls))
	}
	ext.Range(func(name, bv any) bool {
		b, ok := bv.(*ordered.Map)
		if !ok {
			errs = append(errs, fmt.Sprintf("Extension name '%s' in SLS '%s' is not a dictionary", str(name), sls))
			return true
		}
		if !b.Has("__sls__") {
			b.Set("__sls__", sls)
		}
		if !b.Has("__env__") {
			b.Set("__env__", saltenv)
		}
		for _, k := range b.Keys() {
			key, isStr := k.(string)
			if !isStr || strings.HasPrefix(key, "_") {
				continue
			}
			l, ok := b.Value(k).([]any)
			if !ok || !strings.Contains(key, ".") {
				continue
			}
			comps := strings.Split(key, ".")
			b.Delete(k)
			b.Set(comps[0], append(l, comps[1]))
		}
		return true
	})
	l, _ := state.Value("__extend__").([]any)
	state.Set("__extend__", append(l, ext))
	return errs
}

// handleExclude moves `exclude:` to `__exclude__` (_handle_exclude).
func handleExclude(state *ordered.Map, sls string, errs []string) []string {
	v, ok := state.Get("exclude")
	if !ok {
		return errs
	}
	state.Delete("exclude")
	l, isList := v.([]any)
	if !isList {
		errs = append(errs, fmt.Sprintf("Exclude Declaration in SLS %s is not formed as a list", sls))
		l = nil
	}
	old, _ := state.Value("__exclude__").([]any)
	state.Set("__exclude__", append(old, l...))
	return errs
}
