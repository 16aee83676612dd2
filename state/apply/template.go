package apply

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/render"
)

// high runs high data given on the command line (state.high).
func (m *module) high(ctx context.Context, c *modules.Call) (any, error) {
	data, ok := c.Arg("data").(*ordered.Map)
	if !ok {
		return nil, modules.Invalidf("High data must be a dictionary")
	}
	j, err := m.newJob(ctx, c.Env, c.Kwargs, c.Arg("test"))
	if err != nil {
		return nil, err
	}
	return j.callHigh(ctx, ordered.DeepCopy(data).(*ordered.Map))
}

// templateStr renders a string as an SLS and runs it (state.template_str).
func (m *module) templateStr(ctx context.Context, c *modules.Call) (any, error) {
	j, err := m.newJob(ctx, c.Env, c.Kwargs, nil)
	if err != nil {
		return nil, err
	}
	r := &render.Renderer{Log: j.log, Jinja: j.jinja(j.files, "base", j.env)}
	if d, ok := j.env.Opts.Value("renderer").(string); ok {
		r.Default = d
	}
	data, err := r.Render(ctx, []byte(c.Str("tem")), render.Context{Saltenv: "base", Vars: map[string]any{
		"grains": j.env.Grains(), "pillar": j.pillar, "opts": j.env.Opts}})
	if err != nil {
		return nil, fmt.Errorf("render template string: %w", err)
	}
	high, ok := data.(*ordered.Map)
	if !ok || high.Len() == 0 {
		if ok {
			setRetcode(c.Env, exStateFailure)
		}
		return data, nil
	}
	if errs := renderTemplate(high, "<template-str>"); len(errs) > 0 {
		setRetcode(c.Env, exCompilerError)
		return strList(errs), nil
	}
	return j.callHigh(ctx, high)
}

// renderTemplate prepares the high data of a single template
// (State.render_template): no include/exclude/extends, short
// declarations padded, `mod.fun` keys split; no __sls__ and no auto order.
func renderTemplate(high *ordered.Map, tpl string) []string {
	for _, item := range []string{"include", "exclude", "extends"} {
		if high.Has(item) {
			return []string{fmt.Sprintf("The '%s' declaration found on '%s' is invalid when rendering single templates", item, tpl)}
		}
	}
	var errs []string
	high.Range(func(name, v any) bool {
		b, ok := v.(*ordered.Map)
		if !ok {
			if s, isStr := v.(string); isStr && strings.Contains(s, ".") {
				mod, fun, _ := strings.Cut(s, ".")
				fun, _, _ = strings.Cut(fun, ".")
				high.Set(name, ordered.FromPairs(mod, []any{fun}))
			} else {
				errs = append(errs, fmt.Sprintf("ID %s in template %s is not a dictionary", ordered.KeyString(name), tpl))
			}
			return true
		}
		keys := b.StringKeys()
		sort.Strings(keys)
		seen := map[string]bool{}
		for _, key := range keys {
			if strings.HasPrefix(key, "_") {
				continue
			}
			if b.Value(key) == nil {
				errs = append(errs, fmt.Sprintf("ID '%s' in template %s contains a short declaration (%s) with a trailing colon. When not passing any arguments to a state, the colon must be omitted.", ordered.KeyString(name), tpl, key))
				continue
			}
			l, ok := b.Value(key).([]any)
			if !ok {
				continue
			}
			mod, fun, dotted := strings.Cut(key, ".")
			if !dotted {
				seen[key] = true
				continue
			}
			if seen[mod] {
				errs = append(errs, fmt.Sprintf("ID '%s' in template '%s' contains multiple state declarations of the same type", ordered.KeyString(name), tpl))
				continue
			}
			fun, _, _ = strings.Cut(fun, ".")
			b.Delete(key)
			b.Set(mod, append(l, fun))
			seen[mod] = true
		}
		return true
	})
	return errs
}
