package file

import (
	"context"
	"fmt"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/jinja"
	"github.com/brinesalt/brine/state/modules"
)

// TemplateVars holds what salt.utils.templates passes a file template
// besides grains, pillar, opts and salt: the managed file's arguments and
// the merged defaults and context (context wins, and both override the
// fixed names, as wrap_tmpl_func's kws.update(context) does). There is
// no sls in that context, so, as in Salt, tpldir, tplfile and the slspath
// family are not defined in file templates.
type TemplateVars struct {
	Name, Source, Saltenv string
	User, Group, Mode     any
	Defaults, Context     *ordered.Map
	// Contents marks a template given inline (contents: with template:):
	// apply_template_on_contents passes none of the file's arguments.
	Contents bool
}

// RenderTemplate renders src with the named template engine as
// file.managed's get_managed and apply_template_on_contents do. Only
// jinja is supported; another name gives Salt's "Specified template
// format <t> is not supported".
func RenderTemplate(ctx context.Context, env *modules.Env, engine, src string, v TemplateVars) (string, error) {
	if engine != "jinja" {
		return "", modules.Errorf("Specified template format %s is not supported", engine)
	}
	vars := map[string]any{
		"saltenv": v.Saltenv,
		"grains":  orEmpty(env.Grains()), "pillar": orEmpty(env.Pillar), "opts": orEmpty(env.Opts),
	}
	if !v.Contents {
		for k, val := range map[string]any{"name": v.Name, "source": v.Source, "user": v.User,
			"group": v.Group, "mode": v.Mode, "attrs": nil} {
			vars[k] = val
		}
	}
	for _, m := range []*ordered.Map{v.Defaults, v.Context} {
		m.Range(func(k, val any) bool {
			vars[ordered.KeyString(k)] = val
			return true
		})
	}
	opts := jinja.Options{Name: v.Source, Vars: vars, Loader: loader(ctx, env, v.Saltenv)}
	if env.Registry != nil {
		opts.Salt = modules.SaltFuncs{Env: env}
	}
	// The *jinja.Error goes back unwrapped: its text is what Salt puts
	// after "Unable to manage file: ".
	return jinja.Render(ctx, src, opts)
}

func orEmpty(m *ordered.Map) *ordered.Map {
	if m == nil {
		return ordered.New()
	}
	return m
}

func loader(ctx context.Context, env *modules.Env, saltenv string) jinja.Loader {
	return func(name string) ([]byte, string, error) {
		if env.Files == nil {
			return nil, "", fmt.Errorf("%s: %w", name, jinja.ErrTemplateNotFound)
		}
		b, err := env.Files.Get(ctx, "salt://"+name, saltenv)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", name, jinja.ErrTemplateNotFound)
		}
		return b, name, nil
	}
}
