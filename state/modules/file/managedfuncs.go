package file

import (
	"context"
	"fmt"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/state/modules"
)

// registerManaged adds the managed-file helpers other modules and states
// call through __salt__.
func registerManaged(reg func(name, doc string, s modules.Spec, fn modules.Func)) {
	reg("get_source_sum", "Return {hash_type, hsum} for a source_hash.",
		sig(opt("file_name", ""), opt("source", ""), opt("source_hash", nil), opt("source_hash_name", nil),
			opt("saltenv", "base"), opt("verify_ssl", true)), getSourceSum)
	reg("apply_template_on_contents", "Render contents with a template engine.",
		sig(req("contents"), req("template"), req("context"), req("defaults"), req("saltenv")), applyTemplateOnContents)
	reg("manage_file", "Bring a file to a source's or contents' content and fix its permissions.", manageFileSpec, manageFile)
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
		want = []byte(py.Str(v))
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

var manageFileSpec = modules.Spec{Params: []modules.Param{req("name"), req("sfn"), req("ret"), req("source"),
	req("source_sum"), req("user"), req("group"), req("mode"), req("attrs"), req("saltenv"), req("backup"),
	opt("makedirs", false), opt("template", nil), opt("show_changes", true), opt("contents", nil),
	opt("dir_mode", nil), opt("follow_symlinks", true), opt("skip_verify", false), opt("keep_mode", false),
	opt("encoding", nil), opt("encoding_errors", "strict"), opt("seuser", nil), opt("serole", nil),
	opt("setype", nil), opt("serange", nil), opt("verify_ssl", true), opt("use_etag", false)}, VarKw: true}

// manageFile is file.manage_file: sfn (a local, already rendered file)
// or the source, or contents, become name.
func manageFile(ctx context.Context, c *modules.Call) (any, error) {
	name := expandUser(c.Str("name"))
	ret := NewRet(name)
	if m, ok := c.Arg("ret").(*ordered.Map); ok && m.Len() > 0 {
		ret.Comment, _ = m.Value("comment").(string)
		if ch, ok := m.Value("changes").(*ordered.Map); ok {
			ret.Changes = ch
		}
		if r, ok := m.Get("result"); ok {
			ret.Result = r
		}
	}
	m := Manage{Name: name, User: c.Arg("user"), Group: c.Arg("group"), Mode: c.Arg("mode"),
		Backup: c.Str("backup"), Makedirs: c.Bool("makedirs"), ShowChanges: c.Bool("show_changes"),
		DirMode: c.Arg("dir_mode"), Follow: c.Bool("follow_symlinks"), Test: c.Env.Test, Opts: c.Env.Opts}
	if v := c.Arg("mode"); v != nil {
		m.Mode, _ = NormalizeMode(v)
	}
	if v := c.Arg("contents"); v != nil {
		s := py.Str(v)
		m.Contents = &s
	} else if src := c.Str("source"); src != "" {
		var data []byte
		if sfn := c.Str("sfn"); sfn != "" {
			b, err := readFileBytes(sfn)
			if err != nil {
				return nil, err
			}
			data = b
		} else {
			b, comment, err := FetchSource(ctx, c.Env, src, c.Str("saltenv"))
			if err != nil {
				return nil, err
			}
			if comment != "" {
				return ret.Fail(fmt.Sprintf("Source file '%s' not found", src)).Map(), nil
			}
			data = b
		}
		m.Source = &Source{URL: src, Data: data, Fetched: true}
	}
	out, err := ManageFile(m, ret)
	if err != nil {
		return nil, err
	}
	return out.Map(), nil
}
