// Package pillar compiles the minion's pillar from pillar_roots the way
// salt/pillar/__init__.py Pillar.compile_pillar does: the top file picks
// SLS files, which are rendered, have their includes resolved and are
// merged recursively in order (lists are replaced); render failures are
// collected under `_errors` instead of failing.
package pillar

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/brinesalt/brine/state/compile"
	"github.com/brinesalt/brine/state/ordered"
)

// Compiler compiles pillar data.
type Compiler struct {
	Files  compile.Source
	Render compile.RenderFunc
	Match  compile.MatchFunc
	// Override is the pillar= data of the job, merged over the result.
	Override *ordered.Map
	// Saltenv restricts the top file to one pillar environment (pillarenv).
	Saltenv string
	Log     *slog.Logger
}

func (c *Compiler) log() *slog.Logger {
	if c.Log != nil {
		return c.Log
	}
	return slog.New(slog.DiscardHandler)
}

// Compile returns the pillar, with `_errors` when something failed to render.
func (c *Compiler) Compile(ctx context.Context) (*ordered.Map, error) {
	hs := compile.NewHighState(c.Files, c.Render, c.Match)
	hs.Saltenv = c.Saltenv
	top, err := hs.GetTop(ctx)
	if err != nil {
		return nil, err
	}
	matches, err := hs.TopMatches(top)
	if err != nil {
		return nil, err
	}
	pillar := ordered.New()
	if c.Override != nil {
		pillar = compile.DeepCopy(c.Override).(*ordered.Map)
	}
	var errs []string
	for _, env := range matches.Envs {
		avail := c.Files.ListStates(env)
		var files []string
		for _, m := range matches.SLS[env] {
			if f := compile.Filter(avail, m); len(f) > 0 {
				files = append(files, f...)
			} else {
				files = append(files, m)
			}
		}
		mods := map[string]any{}
		for _, sls := range files {
			ps, perrs := c.renderPstate(ctx, sls, env, mods, avail)
			errs = append(errs, perrs...)
			if pm, ok := ps.(*ordered.Map); ok {
				pillar = Merge(pillar, pm)
			}
		}
	}
	errs = append(errs, hs.TopErrors...)
	if len(errs) > 0 {
		l := make([]any, len(errs))
		for i, e := range errs {
			l[i] = e
		}
		pillar.Set("_errors", l)
	}
	if c.Override != nil {
		pillar = Merge(pillar, c.Override)
	}
	return pillar, nil
}

// renderPstate renders one pillar SLS and its includes (render_pstate).
func (c *Compiler) renderPstate(ctx context.Context, sls, env string, mods map[string]any, avail []string) (any, []string) {
	var errs []string
	rel, src, ok, err := c.Files.FindSLS(ctx, sls, env)
	if err != nil {
		return nil, []string{err.Error()}
	}
	if !ok {
		msg := fmt.Sprintf("Specified SLS '%s' in environment '%s' is not available on the salt master", sls, env)
		c.log().Error(msg)
		return nil, []string{msg}
	}
	data, rerr := c.Render(ctx, src, rel, env, sls)
	if rerr != nil {
		c.log().Error(fmt.Sprintf("Rendering SLS '%s' failed, render error:\n%s", sls, rerr.Error()))
		errs = append(errs, fmt.Sprintf("Rendering SLS '%s' failed. Please see master log for details.", sls))
		data = nil
	}
	mods[sls] = data
	if !truthy(data) {
		return data, errs
	}
	state, isMap := data.(*ordered.Map)
	if !isMap {
		msg := fmt.Sprintf("SLS '%s' does not render to a dictionary", sls)
		c.log().Error(msg)
		return data, append(errs, msg)
	}
	incV, ok := state.Get("include")
	if !ok {
		return state, errs
	}
	inc, ok := incV.([]any)
	if !ok {
		msg := fmt.Sprintf("Include Declaration in SLS '%s' is not formed as a list", sls)
		c.log().Error(msg)
		return state, append(errs, msg)
	}
	state.Delete("include")
	included, ierrs := c.includes(ctx, inc, sls, rel, env, mods, avail)
	errs = append(errs, ierrs...)
	// The includer's own keys are merged last, so they win.
	out := state
	if len(included) > 0 {
		out = included[0]
		for _, s := range append(included[1:], state) {
			out = Merge(out, s)
		}
	}
	return out, errs
}

// includes renders the SLS files of an include list; `- name: {key: a:b}`
// nests the included data under a:b.
func (c *Compiler) includes(ctx context.Context, inc []any, sls, rel, env string, mods map[string]any, avail []string) ([]*ordered.Map, []string) {
	var errs []string
	var included []*ordered.Map
	for _, item := range inc {
		sub, key := includeItem(item)
		matched := compile.Filter(avail, strings.ReplaceAll(strings.TrimLeft(sub, "."), "/", "."))
		if strings.HasPrefix(sub, ".") {
			parts := strings.Split(sls, ".")
			if !strings.HasSuffix(rel, "/init.sls") {
				parts = parts[:len(parts)-1]
			}
			sub = strings.Join(append(parts, sub[1:]), ".")
		}
		matched = append(matched, compile.Filter(avail, sub)...)
		if len(matched) == 0 {
			matched = []string{sub}
		}
		for _, m := range matched {
			n, done := mods[m]
			if !done {
				var nerrs []string
				n, nerrs = c.renderPstate(ctx, m, env, mods, avail)
				errs = append(errs, nerrs...)
			}
			if nm, ok := n.(*ordered.Map); ok && nm.Len() > 0 {
				included = append(included, nestUnder(nm, key))
			}
		}
	}
	return included, errs
}

func includeItem(item any) (sub, key string) {
	sub = ordered.KeyString(item)
	if m, ok := item.(*ordered.Map); ok && m.Len() > 0 {
		k, v, _ := compile.First(m)
		sub = k
		if vm, ok := v.(*ordered.Map); ok {
			if kv, ok := vm.Get("key"); ok && kv != nil {
				key = ordered.KeyString(kv)
			}
		}
	}
	return sub, key
}

// nestUnder wraps m as {a: {b: m}} for key "a:b".
func nestUnder(m *ordered.Map, key string) *ordered.Map {
	if key == "" {
		return m
	}
	parts := strings.Split(key, ":")
	for i := len(parts) - 1; i >= 0; i-- {
		m = ordered.FromPairs(parts[i], m)
	}
	return m
}

func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case *ordered.Map:
		return x.Len() > 0
	case string:
		return x != ""
	case []any:
		return len(x) > 0
	case bool:
		return x
	}
	return true
}

// Merge merges b over a recursively (salt/utils/dictupdate.py
// merge_recurse without merge_lists): mappings merge, everything else,
// lists included, is replaced. a is not modified.
func Merge(a, b *ordered.Map) *ordered.Map {
	out := a.Copy()
	b.Range(func(k, v any) bool {
		if vm, ok := v.(*ordered.Map); ok {
			if am, ok := out.Value(k).(*ordered.Map); ok {
				out.Set(k, Merge(am, vm))
				return true
			}
		}
		out.Set(k, v)
		return true
	})
	return out
}
