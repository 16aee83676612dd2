package pillar

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/compile"
)

// Compiler compiles pillar data. A Compiler is not modified by Compile,
// so one may serve concurrent compilations.
type Compiler struct {
	Files  compile.Source
	Render compile.RenderFunc
	Match  compile.MatchFunc
	// Override is the pillar= data of the job, merged over the result.
	Override *ordered.Map
	// Saltenv restricts the top file to one pillar environment (pillarenv).
	Saltenv string
	Log     *slog.Logger
	// Opts are the options of the machine compiling the pillar (the
	// master, or the minion when masterless). Compile reads
	// pillar_source_merging_strategy, pillar_merge_lists, renderer,
	// pillar_includes_override_sls, pillar_safe_render_error, ext_pillar,
	// ext_pillar_first, exclude_ext_pillar and saltenv from them, and
	// external pillars read their own options. nil means Salt's defaults
	// and no external pillars.
	Opts *ordered.Map
	// MinionID is the minion the pillar is for, passed to external
	// pillars (and substituted for %s by cmd_yaml and cmd_json); ""
	// means the id option, as when a minion compiles its own pillar.
	MinionID string
	// Ext resolves the names of the ext_pillar option; nil means
	// DefaultExt.
	Ext *ExtRegistry
	// RenderFor returns the RenderFunc for SLS files read from files,
	// for compilations over other roots (the git external pillar), so
	// that Jinja imports resolve there. nil means Render.
	RenderFor func(files compile.Source) compile.RenderFunc

	// noExt compiles without external pillars (compile_pillar(ext=False)).
	noExt bool
}

func (c *Compiler) log() *slog.Logger {
	if c.Log != nil {
		return c.Log
	}
	return slog.New(slog.DiscardHandler)
}

// settings are the options Compile reads, resolved once per compilation.
type settings struct {
	strategy         Strategy
	includesOverride bool
	safeRenderError  bool
	extFirst         bool
}

func (c *Compiler) settings() settings {
	o := c.Opts
	s := settings{safeRenderError: true}
	s.strategy.Name, _ = o.Value("pillar_source_merging_strategy").(string)
	s.strategy.Renderer, _ = o.Value("renderer").(string)
	if s.strategy.Renderer == "" {
		s.strategy.Renderer = "jinja|yaml"
	}
	s.strategy.MergeLists = truthy(o.Value("pillar_merge_lists"))
	s.strategy.Log = c.log()
	s.includesOverride = truthy(o.Value("pillar_includes_override_sls"))
	if v, ok := o.Get("pillar_safe_render_error"); ok {
		s.safeRenderError = truthy(v)
	}
	s.extFirst = truthy(o.Value("ext_pillar_first"))
	return s
}

// Compile returns the pillar, with `_errors` when something failed.
// Only a top file that cannot be read or matched is a Go error.
func (c *Compiler) Compile(ctx context.Context) (*ordered.Map, error) {
	s := c.settings()
	hs := compile.NewHighState(c.topSource(s), c.Render, c.Match)
	hs.Saltenv = c.Saltenv
	hs.Log = c.Log
	top, err := hs.GetTop(ctx)
	if err != nil {
		return nil, err
	}
	matches, err := hs.TopMatches(top)
	if err != nil {
		return nil, err
	}
	override := c.Override
	if override == nil {
		override = ordered.New()
	}
	var pillar *ordered.Map
	var errs []string
	switch {
	case c.noExt:
		pillar, errs = c.renderPillar(ctx, matches, s, override, nil)
	case s.extFirst:
		ext, eerrs := c.extPillar(ctx, s, ordered.DeepCopy(override).(*ordered.Map), nil)
		rendered, rerrs := c.renderPillar(WithPillar(ctx, ext), matches, s, override, eerrs)
		pillar, errs = s.strategy.Merge(ext, rendered), rerrs
	default:
		pillar, errs = c.renderPillar(ctx, matches, s, override, nil)
		pillar, errs = c.extPillar(ctx, s, pillar, errs)
	}
	errs = append(errs, hs.TopErrors...)
	if len(errs) > 0 {
		l := make([]any, len(errs))
		for i, e := range errs {
			c.log().Error("Pillar render error: " + e)
			l[i] = e
		}
		pillar.Set("_errors", l)
	}
	if override.Len() > 0 {
		pillar = s.strategy.Merge(pillar, override)
	}
	return pillar, nil
}

// topSource is the source top files are read from: with the "none"
// strategy and no pillarenv, only the saltenv option's environment (or
// base), as Pillar.get_tops does.
func (c *Compiler) topSource(s settings) compile.Source {
	if s.strategy.Name != StrategyNone || c.Saltenv != "" {
		return c.Files
	}
	env, _ := c.Opts.Value("saltenv").(string)
	if env == "" {
		env = "base"
	}
	return envsSource{Source: c.Files, envs: []string{env}}
}

// envsSource narrows the environments of a Source.
type envsSource struct {
	compile.Source
	envs []string
}

func (e envsSource) Envs() []string {
	var out []string
	for _, env := range e.Source.Envs() {
		for _, want := range e.envs {
			if env == want {
				out = append(out, env)
			}
		}
	}
	return out
}

// renderPillar renders the matched SLS files of every environment and
// merges them over a copy of the override (render_pillar).
func (c *Compiler) renderPillar(ctx context.Context, matches *compile.Matches, s settings, override *ordered.Map, errs []string) (*ordered.Map, []string) {
	pillar := ordered.DeepCopy(override).(*ordered.Map)
	for _, env := range matches.Envs {
		if !c.hasEnv(env) {
			errs = append(errs, fmt.Sprintf("No matching pillar environment for environment '%s' found", env))
		}
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
			ps, perrs := c.renderPstate(ctx, sls, env, mods, avail, s)
			errs = append(errs, perrs...)
			if pm, ok := ps.(*ordered.Map); ok {
				pillar = s.strategy.Merge(pillar, pm)
			} else if ps != nil {
				c.log().Error(fmt.Sprintf("The rendered pillar sls file, '%s' state did not return the expected data format. "+
					"This is a sign of a malformed pillar sls file.", sls))
			}
		}
	}
	return pillar, errs
}

func (c *Compiler) hasEnv(env string) bool {
	for _, e := range c.Files.Envs() {
		if e == env {
			return true
		}
	}
	return false
}

// renderPstate renders one pillar SLS and its includes (render_pstate).
func (c *Compiler) renderPstate(ctx context.Context, sls, env string, mods map[string]any, avail []string, s settings) (any, []string) {
	rel, src, ok, err := c.Files.FindSLS(ctx, sls, env)
	if err != nil {
		return nil, []string{err.Error()}
	}
	if !ok {
		if !c.hasEnv(env) {
			// Salt only logs at debug level when the environment has no
			// pillar_roots at all.
			c.log().Debug(fmt.Sprintf("Specified SLS '%s' in environment '%s' was not found.", sls, env))
			return nil, nil
		}
		msg := fmt.Sprintf("Specified SLS '%s' in environment '%s' is not available on the salt master", sls, env)
		c.log().Error(msg)
		return nil, []string{msg}
	}
	var errs []string
	data, rerr := c.renderSafe(ctx, src, rel, env, sls)
	if rerr != nil {
		re := newRenderError(sls, env, rel, rerr)
		msg := fmt.Sprintf("Rendering SLS '%s' failed, render error:\n%s", sls, rerr.Error())
		c.log().Error(msg, "sls", sls, "saltenv", env, "file", re.File, "line", re.Line)
		if s.safeRenderError {
			msg = fmt.Sprintf("Rendering SLS '%s' failed. Please see master log for details.", sls)
		}
		errs = append(errs, msg)
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
	included, ierrs := c.includes(ctx, inc, sls, rel, env, mods, avail, s)
	errs = append(errs, ierrs...)
	if s.includesOverride {
		// pillar_includes_override_sls: each include is merged over the
		// includer as it comes.
		out := state
		for _, n := range included {
			out = s.strategy.Merge(out, n)
		}
		return out, errs
	}
	// The includer's own keys are merged last, so they win.
	out := state
	if len(included) > 0 {
		out = included[0]
		for _, n := range append(included[1:], state) {
			out = s.strategy.Merge(out, n)
		}
	}
	return out, errs
}

// renderSafe calls Render, turning a panic into a render error so that
// one minion's broken pillar never takes the compiling process down.
func (c *Compiler) renderSafe(ctx context.Context, src []byte, rel, env, sls string) (data any, err error) {
	defer func() {
		if r := recover(); r != nil {
			data, err = nil, fmt.Errorf("renderer panic: %v", r)
		}
	}()
	return c.Render(ctx, src, rel, env, sls)
}

// includes renders the SLS files of an include list; `- name: {key: a:b}`
// nests the included data under a:b.
func (c *Compiler) includes(ctx context.Context, inc []any, sls, rel, env string, mods map[string]any, avail []string, s settings) ([]*ordered.Map, []string) {
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
				n, nerrs = c.renderPstate(ctx, m, env, mods, avail, s)
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
	case int:
		return x != 0
	case float64:
		return x != 0
	}
	return true
}

type pillarKey struct{}

// WithPillar returns ctx carrying the pillar compiled so far. With
// ext_pillar_first the SLS files are rendered with the external pillar
// data as their `pillar` (Salt sets opts["pillar"] before rendering);
// a RenderFunc reads it with ContextPillar.
func WithPillar(ctx context.Context, p *ordered.Map) context.Context {
	return context.WithValue(ctx, pillarKey{}, p)
}

// ContextPillar returns the pillar WithPillar put in ctx.
func ContextPillar(ctx context.Context) (*ordered.Map, bool) {
	p, ok := ctx.Value(pillarKey{}).(*ordered.Map)
	return p, ok
}
