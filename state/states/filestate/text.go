package filestate

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/modules/file"
	"github.com/brinesalt/brine/state/states"
)

var textSpec = spec(false, opt("text", nil), opt("makedirs", false), opt("source", nil),
	opt("source_hash", nil), opt("template", "jinja"), opt("sources", nil), opt("source_hashes", nil),
	opt("defaults", nil), opt("context", nil), opt("ignore_whitespace", true))

var prependSpec = spec(false, opt("text", nil), opt("makedirs", false), opt("source", nil),
	opt("source_hash", nil), opt("template", "jinja"), opt("sources", nil), opt("source_hashes", nil),
	opt("defaults", nil), opt("context", nil), opt("header", nil))

var replaceSpec = spec(false, modules.Param{Name: "pattern"}, modules.Param{Name: "repl"},
	opt("count", 0), opt("flags", 8), opt("bufsize", 1), opt("append_if_not_found", false),
	opt("prepend_if_not_found", false), opt("not_found_content", nil), opt("backup", ".bak"),
	opt("show_changes", true), opt("ignore_if_missing", false), opt("backslash_literal", false))

var lineSpec = spec(false, opt("content", nil), opt("match", nil), opt("mode", nil), opt("location", nil),
	opt("before", nil), opt("after", nil), opt("show_changes", true), opt("backup", false),
	opt("quiet", false), opt("indent", true), opt("create", false), opt("user", nil),
	opt("group", nil), opt("file_mode", nil))

// checkFile is _check_file.
func checkFile(name string) string {
	if !filepath.IsAbs(name) {
		return fmt.Sprintf("Specified file %s is not an absolute path", name)
	}
	if !pathExists(name) {
		return fmt.Sprintf("%s: file not found", name)
	}
	return ""
}

// textChunks is _validate_str_list over text, or the rendered sources.
func textChunks(ctx context.Context, c *states.Call) ([]string, *states.Result) {
	name := c.Str("name")
	sources, _ := c.Arg("sources").([]any)
	if modules.Truthy(c.Arg("source")) && len(sources) > 0 {
		return nil, fail(name, "source and sources are mutually exclusive")
	}
	if modules.Truthy(c.Arg("source_hash")) && modules.Truthy(c.Arg("source_hashes")) {
		return nil, fail(name, "source_hash and source_hashes are mutually exclusive")
	}
	if s := c.Arg("source"); modules.Truthy(s) {
		sources = []any{s}
	}
	if len(sources) > 0 {
		var out []string
		defaults, _ := mapArg(c, "defaults")
		context_, _ := mapArg(c, "context")
		for _, s := range sources {
			src := py.Str(s)
			data, comment, err := file.FetchSource(ctx, c.Env, src, saltenv(c))
			if err != nil || comment != "" {
				r := fail(src, fmt.Sprintf("Failed to load template file %s", src))
				return nil, r
			}
			text := string(data)
			if tpl := c.Str("template"); tpl != "" {
				text, err = file.RenderTemplate(ctx, c.Env, tpl, text, file.TemplateVars{
					Source: src, Saltenv: saltenv(c), Defaults: defaults, Context: context_, Contents: true})
				if err != nil {
					return nil, fail(src, err.Error())
				}
			}
			if text == "" {
				return nil, fail(src, fmt.Sprintf("Failed to read rendered template file %s (%s)", src, src))
			}
			out = append(out, text)
		}
		return out, nil
	}
	switch t := c.Arg("text").(type) {
	case nil:
		return nil, nil
	case []any:
		out := make([]string, len(t))
		for i, x := range t {
			out[i] = py.Str(x)
		}
		return out, nil
	default:
		return []string{py.Str(t)}, nil
	}
}

// ensureTextFile is the makedirs and touch prologue of append and
// prepend; a non-nil Result ends the state.
func ensureTextFile(c *states.Call, name string, r *states.Result) *states.Result {
	if c.Bool("makedirs") {
		dir := filepath.Dir(name)
		if c.Env.Test {
			r.Comment = fmt.Sprintf("Directory %s is set to be updated", dir)
			r.Result = states.None
		} else if !isDir(dir) {
			if _, err := file.Makedirs(name, nil, nil, nil, false); err != nil {
				return fail(name, err.Error())
			}
		}
	}
	if msg := checkFile(name); msg != "" {
		tr, _ := touch(context.Background(), &states.Call{Env: c.Env, Args: map[string]any{"name": name, "makedirs": c.Arg("makedirs")}})
		if c.Env.Test {
			return tr
		}
		if checkFile(name) != "" {
			return fail(name, msg)
		}
	}
	return nil
}

// appendState is file.append: add the chunks of text not already in the
// file. Its diff is difflib's lines joined with "\n", so the headers are
// followed by blank lines (notes item 36).
func appendState(ctx context.Context, c *states.Call) (*states.Result, error) {
	name := expandUser(c.Str("name"))
	r := states.NewResult(name, states.False, "")
	if name == "" {
		return fail(name, "Must provide name to file.append"), nil
	}
	if res := ensureTextFile(c, name, r); res != nil {
		return res, nil
	}
	chunks, res := textChunks(ctx, c)
	if res != nil {
		return res, nil
	}
	if chunks == nil {
		return fail(name, "No text found to append. Nothing appended"), nil
	}
	raw, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	slines := file.SplitLines(string(raw))
	var add []string
	for _, chunk := range chunks {
		pat := chunk
		if c.Bool("ignore_whitespace") {
			if pat, err = file.WhitespaceSplitRegex(chunk); err != nil {
				return nil, err
			}
		}
		if found, err := file.Search(name, pat, 8, true, false); err == nil && found {
			continue
		}
		add = append(add, file.SplitLines(chunk)...)
	}
	if c.Env.Test {
		nlines := append(append([]string{}, slines...), add...)
		if len(add) == 0 {
			r.Result, r.Comment = states.True, fmt.Sprintf("File %s is in correct state", name)
			return r, nil
		}
		r.Result, r.Comment = states.None, fmt.Sprintf("File %s is set to be updated", name)
		setTextDiff(r, raw, slines, nlines, "\n")
		return r, nil
	}
	if len(add) > 0 {
		if _, err := file.AppendLines(name, add); err != nil {
			return nil, err
		}
		r.Comment = fmt.Sprintf("Appended %d lines", len(add))
	} else {
		r.Comment = fmt.Sprintf("File %s is in correct state", name)
	}
	after, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	setTextDiff(r, after, slines, file.SplitLines(string(after)), "\n")
	r.Result = states.True
	return r, nil
}

// setTextDiff sets "diff" when the lines differ: difflib's unified_diff
// joined with sep (lines without their endings, headers with "\n").
func setTextDiff(r *states.Result, raw []byte, old, new []string, sep string) {
	if equal(old, new) {
		return
	}
	if !file.IsText(raw) {
		r.Changes.Set("diff", "Replace binary file")
		return
	}
	r.Changes.Set("diff", strings.Join(file.UnifiedDiff(old, new, "\n"), sep))
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// prependState is file.prepend.
func prependState(ctx context.Context, c *states.Call) (*states.Result, error) {
	name := expandUser(c.Str("name"))
	r := states.NewResult(name, states.False, "")
	if name == "" {
		return fail(name, "Must provide name to file.prepend"), nil
	}
	if res := ensureTextFile(c, name, r); res != nil {
		return res, nil
	}
	chunks, res := textChunks(ctx, c)
	if res != nil {
		return res, nil
	}
	raw, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	slines := file.SplitLinesKeep(string(raw))
	header := c.Bool("header")
	var preface, testLines []string
	count := 0
	for _, chunk := range chunks {
		if !header {
			pat, err := file.WhitespaceSplitRegex(chunk)
			if err != nil {
				return nil, err
			}
			if found, err := file.Search(name, pat, 8, true, false); err == nil && found {
				continue
			}
		}
		for _, l := range file.SplitLines(chunk) {
			if c.Env.Test {
				r.Comment, r.Result = fmt.Sprintf("File %s is set to be updated", name), states.None
				testLines = append(testLines, l+"\n")
			} else {
				preface = append(preface, l)
			}
			count++
		}
	}
	if c.Env.Test {
		nlines := append(testLines, slines...)
		if len(testLines) == 0 {
			r.Result, r.Comment = states.True, fmt.Sprintf("File %s is in correct state", name)
		} else {
			setTextDiff(r, raw, slines, nlines, "")
			r.Result = states.None
		}
		return r, nil
	}
	doPrepend := true
	if header {
		var head []string
		for _, l := range slines[:min(len(preface), len(slines))] {
			head = append(head, file.SplitLines(l)...)
		}
		if equal(head, preface) {
			doPrepend, count = false, 0
		}
	}
	if doPrepend && len(preface) > 0 {
		if _, err := file.PrependLines(name, preface); err != nil {
			return nil, err
		}
	}
	after, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	setTextDiff(r, after, slines, file.SplitLinesKeep(string(after)), "")
	if count > 0 {
		r.Comment = fmt.Sprintf("Prepended %d lines", count)
	} else {
		r.Comment = fmt.Sprintf("File %s is in correct state", name)
	}
	r.Result = states.True
	return r, nil
}

// replace is file.replace.
func replace(_ context.Context, c *states.Call) (*states.Result, error) {
	name := expandUser(c.Str("name"))
	r := states.NewResult(name, states.True, "")
	if name == "" {
		return fail(name, "Must provide name to file.replace"), nil
	}
	if msg := checkFile(name); msg != "" {
		if c.Bool("ignore_if_missing") && strings.Contains(msg, "file not found") {
			r.Comment = "No changes needed to be made"
			return r, nil
		}
		return fail(name, msg), nil
	}
	flags, err := file.ParseFlags(c.Arg("flags"))
	if err != nil {
		return nil, err
	}
	count, _ := c.Arg("count").(int)
	o := file.ReplaceOpts{
		Pattern: c.Str("pattern"), Repl: c.Str("repl"), Count: count, Flags: flags,
		AppendIfNotFound: c.Bool("append_if_not_found"), PrependIfNotFound: c.Bool("prepend_if_not_found"),
		DryRun: c.Env.Test, ShowChanges: c.Bool("show_changes"),
		IgnoreIfMissing: c.Bool("ignore_if_missing"), BackslashLiteral: c.Bool("backslash_literal"),
	}
	if nf, ok := strArg(c, "not_found_content"); ok {
		o.NotFoundContent = &nf
	}
	if b := c.Arg("backup"); modules.Truthy(b) {
		o.Backup = py.Str(b)
	}
	changes, err := file.Replace(name, o)
	if err != nil {
		return nil, err
	}
	if modules.Truthy(changes) {
		r.Changes.Set("diff", changes)
		if c.Env.Test {
			r.Result, r.Comment = states.None, "Changes would have been made"
		} else {
			r.Comment = "Changes were made"
		}
		return r, nil
	}
	r.Comment = "No changes needed to be made"
	return r, nil
}

// line is file.line.
func line(ctx context.Context, c *states.Call) (*states.Result, error) {
	name := expandUser(c.Str("name"))
	r := states.NewResult(name, states.True, "")
	if name == "" {
		return fail(name, "Must provide name to file.line"), nil
	}
	// Salt calls managed(create=…, replace=False) first, for its side
	// effects of creating the file and fixing its permissions.
	mc := &states.Call{Env: c.Env, Saltenv: c.Saltenv, Kwargs: ordered.New(), Args: map[string]any{}}
	for _, p := range managedSpec.Params {
		mc.Args[p.Name] = p.Default
	}
	mc.Args["name"], mc.Args["create"], mc.Args["replace"] = name, c.Arg("create"), false
	mc.Args["user"], mc.Args["group"], mc.Args["mode"] = c.Arg("user"), c.Arg("group"), c.Arg("file_mode")
	if _, err := managed(ctx, mc); err != nil {
		return nil, err
	}
	if msg := checkFile(name); msg != "" {
		return fail(name, msg), nil
	}
	mode := strings.ToLower(c.Str("mode"))
	if mode == "" {
		return fail(name, "Mode was not defined. How to process the file?"), nil
	}
	if mode != "delete" && c.Arg("content") == nil {
		return fail(name, "Content can only be empty if mode is ['delete']"), nil
	}
	o := file.LineOpts{Mode: mode, ShowChanges: c.Bool("show_changes"), Backup: c.Bool("backup"),
		Quiet: c.Bool("quiet"), Indent: c.Bool("indent"), Test: c.Env.Test}
	for arg, dst := range map[string]**string{"content": &o.Content, "match": &o.Match,
		"location": &o.Location, "before": &o.Before, "after": &o.After} {
		if s, ok := strArg(c, arg); ok {
			*dst = &s
		}
	}
	changes, err := file.Line(name, o)
	if err != nil {
		return nil, err
	}
	if modules.Truthy(changes) {
		r.Changes.Set("diff", changes)
		if c.Env.Test {
			r.Result, r.Comment = states.None, "Changes would be made"
		} else {
			r.Comment = "Changes were made"
		}
		return r, nil
	}
	r.Comment = "No changes needed to be made"
	return r, nil
}

var blockSpec = spec(false, opt("marker_start", "#-- start managed zone --"),
	opt("marker_end", "#-- end managed zone --"), opt("source", nil), opt("source_hash", nil),
	opt("template", "jinja"), opt("sources", nil), opt("source_hashes", nil), opt("defaults", nil),
	opt("context", nil), opt("content", ""), opt("append_if_not_found", false),
	opt("prepend_if_not_found", false), opt("backup", ".bak"), opt("show_changes", true),
	opt("append_newline", nil), opt("insert_before_match", nil), opt("insert_after_match", nil))

// blockreplace is file.blockreplace. Salt's accumulators (file.accumulated)
// are not supported.
func blockreplace(ctx context.Context, c *states.Call) (*states.Result, error) {
	name := expandUser(c.Str("name"))
	r := states.NewResult(name, states.False, "")
	if name == "" {
		return fail(name, "Must provide name to file.blockreplace"), nil
	}
	if msg := checkFile(name); msg != "" {
		return fail(name, msg), nil
	}
	o := file.BlockOptsFrom(c.Arg)
	o.Content = accumulatorText(c, name, o.Content)
	if modules.Truthy(c.Arg("source")) || modules.Truthy(c.Arg("sources")) {
		chunks, res := textChunks(ctx, c)
		if res != nil {
			return res, nil
		}
		o.Content += strings.Join(chunks, "")
	}
	o.DryRun = c.Env.Test
	changes, err := file.BlockReplace(name, o)
	if err != nil {
		r.Comment = fmt.Sprintf("Encountered error managing block: %s. See the log for details.", err.Error())
		return r, nil
	}
	if modules.Truthy(changes) {
		r.Changes.Set("diff", changes)
		r.Result, r.Comment = states.True, "Changes were made"
		if c.Env.Test {
			r.Result, r.Comment = states.None, "Changes would be made"
		}
		return r, nil
	}
	r.Result, r.Comment = states.True, "No changes needed to be made"
	return r, nil
}
