package cp

import (
	"context"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/jinja"
	"github.com/brinesalt/brine/state/modules"
)

// caller lets path templates call execution functions (salt[...]).
type caller struct{ env *modules.Env }

func (s caller) Call(ctx context.Context, fun string, args []any, kw *ordered.Map) (any, error) {
	return s.env.Run(ctx, fun, args, kw)
}

// renderFilenames is cp's _render_filenames: with template set, path
// and dest are themselves rendered with salt, pillar, grains, opts and
// saltenv in the context. Only jinja is available.
func renderFilenames(ctx context.Context, c *modules.Call, p, dest, saltenv string) (string, string, error) {
	tmpl := c.Str("template")
	if !modules.Truthy(c.Arg("template")) {
		return p, dest, nil
	}
	if tmpl != "jinja" {
		return "", "", modules.Errorf("Attempted to render file paths with unavailable engine %s", tmpl)
	}
	vars := map[string]any{"grains": orEmpty(c.Env.Grains()), "pillar": orEmpty(c.Env.Pillar),
		"opts": orEmpty(c.Env.Opts), "saltenv": saltenv}
	opts := jinja.Options{Name: "<path>", Vars: vars}
	if c.Env.Registry != nil {
		opts.Salt = caller{c.Env}
	}
	var out [2]string
	for i, s := range []string{p, dest} {
		r, err := jinja.Render(ctx, s, opts)
		if err != nil {
			return "", "", modules.Errorf("Failed to render file path with error: %w", err)
		}
		out[i] = r
	}
	return out[0], out[1], nil
}

func orEmpty(m *ordered.Map) *ordered.Map {
	if m == nil {
		return ordered.New()
	}
	return m
}
