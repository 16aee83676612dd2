package file

import (
	"context"

	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/ordered"
)

// registerManaged adds the managed-file helpers other modules and states
// call through __salt__.
func registerManaged(reg func(name, doc string, s modules.Spec, fn modules.Func)) {
	reg("get_source_sum", "Return {hash_type, hsum} for a source_hash.",
		sig(opt("file_name", ""), opt("source", ""), opt("source_hash", nil), opt("source_hash_name", nil),
			opt("saltenv", "base"), opt("verify_ssl", true)), getSourceSum)
	reg("apply_template_on_contents", "Render contents with a template engine.",
		sig(req("contents"), req("template"), req("context"), req("defaults"), req("saltenv")), applyTemplateOnContents)
	reg("check_file_meta", "Return the changes managing a file would make.",
		modules.Spec{Params: []modules.Param{req("name"), req("sfn"), req("source"), req("source_sum"), req("user"),
			req("group"), req("mode"), req("attrs"), req("saltenv"), opt("contents", nil), opt("verify_ssl", true),
			opt("follow_symlinks", false)}}, checkFileMeta)
}

func getSourceSum(ctx context.Context, c *modules.Call) (any, error) {
	if c.Arg("source_hash") == nil {
		return nil, invalidSourceHash("None")
	}
	name, _ := c.Arg("source_hash_name").(string)
	t, h, err := SourceSum(ctx, c.Env, c.Str("file_name"), c.Str("source"), c.Str("source_hash"), name, c.Str("saltenv"))
	if err != nil {
		return nil, err
	}
	return ordered.FromPairs("hash_type", t, "hsum", h), nil
}

func applyTemplateOnContents(ctx context.Context, c *modules.Call) (any, error) {
	tpl := c.Str("template")
	if tpl != "jinja" {
		return ordered.FromPairs("result", false, "comment", "Specified template format "+tpl+" is not supported"), nil
	}
	defaults, _ := c.Arg("defaults").(*ordered.Map)
	context_, _ := c.Arg("context").(*ordered.Map)
	return RenderTemplate(ctx, c.Env, tpl, c.Str("contents"), TemplateVars{Saltenv: c.Str("saltenv"),
		Defaults: defaults, Context: context_, Contents: true})
}

func checkFileMeta(_ context.Context, c *modules.Call) (any, error) {
	var want []byte
	if v := c.Arg("contents"); v != nil {
		want = []byte(pyStr(v))
	} else if sfn := c.Str("sfn"); sfn != "" {
		b, err := readFileBytes(sfn)
		if err != nil {
			return nil, err
		}
		want = b
	}
	mode, _ := NormalizeMode(c.Arg("mode"))
	var m any
	if c.Arg("mode") != nil {
		m = mode
	}
	return CheckFileMeta(expandUser(c.Str("name")), want, c.Arg("user"), c.Arg("group"), m, c.Bool("follow_symlinks")), nil
}
