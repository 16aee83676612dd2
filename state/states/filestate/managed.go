package filestate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/modules/file"
	"github.com/brinesalt/brine/state/shell"
	"github.com/brinesalt/brine/state/states"
)

var managedSpec = spec(true,
	opt("source", nil), opt("source_hash", ""), opt("source_hash_name", nil), opt("keep_source", true),
	opt("user", nil), opt("group", nil), opt("mode", nil), opt("attrs", nil), opt("template", nil),
	opt("makedirs", false), opt("dir_mode", nil), opt("context", nil), opt("replace", true),
	opt("defaults", nil), opt("backup", ""), opt("show_changes", true), opt("create", true),
	opt("contents", nil), opt("tmp_dir", ""), opt("tmp_ext", ""), opt("contents_pillar", nil),
	opt("contents_grains", nil), opt("contents_newline", true), opt("contents_delimiter", ":"),
	opt("encoding", nil), opt("encoding_errors", "strict"), opt("allow_empty", true),
	opt("follow_symlinks", true), opt("check_cmd", nil), opt("skip_verify", false),
	opt("selinux", nil), opt("win_owner", nil), opt("win_perms", nil), opt("win_deny_perms", nil),
	opt("win_inheritance", true), opt("win_perms_reset", false), opt("verify_ssl", true),
	opt("use_etag", false),
)

// managedArgs is file.managed's arguments once validated.
type managedArgs struct {
	name, template, saltenv string
	source                  any
	sourceHash              string
	user, group, mode       any
	contents                *string
	context, defaults       *ordered.Map
	replace, follow         bool
	keepMode                bool
}

// managed is file.managed.
func managed(ctx context.Context, c *states.Call) (*states.Result, error) {
	a, res := managedPrepare(ctx, c)
	if res != nil {
		return res, nil
	}
	ret := file.NewRet(a.name)
	if _, ok := c.Kw("file_mode"); ok {
		ret.Warnings = append(ret.Warnings, "The 'file_mode' argument will be ignored.  Please use 'mode' instead to set file permissions.")
	}
	if res := managedChecks(c, a, ret); res != nil {
		return res, nil
	}
	if acc := accumulatorContext(c.Env, a.name); acc != nil {
		if a.context == nil {
			a.context = ordered.New()
		} else {
			a.context = a.context.Copy()
		}
		a.context.Set("accumulator", acc)
	}
	if a.replace && a.contents == nil && a.template == "" && pathExists(a.name) && remoteHashMatches(ctx, c, a) {
		a.replace = false
	}
	if _, err := os.Lstat(a.name); !a.replace && err == nil {
		return managedPermsOnly(c, a, ret)
	}
	if c.Env.Test {
		return managedTest(ctx, c, a, ret)
	}
	return managedApply(ctx, c, a, ret)
}

// managedChecks is the validation between building the contents and
// managing the file; a non-nil Result ends the state.
func managedChecks(c *states.Call, a *managedArgs, ret *file.Ret) *states.Result {
	name := a.name
	if !c.Bool("create") {
		if st, err := os.Stat(name); err != nil || !st.Mode().IsRegular() {
			ret.Comment = fmt.Sprintf("File %s is not present and is not set for creation", name)
			return result(ret)
		}
	}
	if msg := checkUser(c, a.user, a.group); msg != "" {
		return fail(name, msg)
	}
	if !filepath.IsAbs(name) {
		return fail(name, fmt.Sprintf("Specified file %s is not an absolute path", name))
	}
	if st, err := os.Stat(name); err == nil && st.IsDir() {
		return fail(name, fmt.Sprintf("Specified target %s is a directory", name))
	}
	if _, ok := mapArg(c, "context"); !ok {
		return fail(name, "Context must be formed as a dict")
	}
	if _, ok := mapArg(c, "defaults"); !ok && modules.Truthy(c.Arg("defaults")) {
		return fail(name, "Defaults must be formed as a dict")
	}
	return nil
}

// managedApply fetches and renders the source, runs check_cmd and
// manages the file (manage_file).
func managedApply(ctx context.Context, c *states.Call, a *managedArgs, ret *file.Ret) (*states.Result, error) {
	name := a.name
	src, sourceHash, err := file.SourceList(ctx, c.Env, a.source, a.sourceHash, a.saltenv)
	if err != nil {
		return fail(name, "Unable to manage file: "+err.Error()), nil
	}
	a.sourceHash = sourceHash
	source, comment, err := getManaged(ctx, c, a, src)
	if err != nil {
		return fail(name, "Unable to manage file: "+err.Error()), nil
	}
	if comment != "" && a.contents == nil {
		return fail(name, comment), nil
	}
	if a.contents != nil {
		source = nil
	}
	if a.keepMode && source != nil {
		a.mode = sourceMode(c, src, a.saltenv)
	}
	m := file.Manage{
		Name: name, Source: source, User: a.user, Group: a.group, Mode: a.mode,
		Backup: c.Str("backup"), Makedirs: c.Bool("makedirs"), ShowChanges: c.Bool("show_changes"),
		Contents: a.contents, DirMode: c.Arg("dir_mode"), Follow: a.follow, Opts: c.Env.Opts,
	}
	if cmd, ok := strArg(c, "check_cmd"); ok && cmd != "" {
		if res, err := checkCmd(ctx, c, m, cmd); err != nil || res != nil {
			return res, err
		}
	}
	ret, err = file.ManageFile(m, ret)
	if err != nil {
		return fail(name, "Unable to manage file: "+err.Error()), nil
	}
	return result(ret), nil
}

// managedPrepare validates the arguments and builds the contents as the
// top of Salt's managed does; a non-nil Result ends the state.
func managedPrepare(ctx context.Context, c *states.Call) (*managedArgs, *states.Result) {
	name := expandUser(c.Str("name"))
	a := &managedArgs{name: name, saltenv: saltenv(c), source: c.Arg("source"),
		sourceHash: c.Str("source_hash"), user: owner(c), group: c.Arg("group"),
		replace: c.Bool("replace"), follow: c.Bool("follow_symlinks")}
	a.template, _ = strArg(c, "template")
	a.context, _ = mapArg(c, "context")
	a.defaults, _ = mapArg(c, "defaults")
	if name == "" {
		return nil, fail(name, "Destination file name is required")
	}
	mode := c.Arg("mode")
	keepMode := false
	if s, ok := mode.(string); ok && strings.EqualFold(s, "keep") {
		keepMode, mode = true, nil
	}
	a.keepMode = keepMode
	if m, ok := file.NormalizeMode(mode); ok {
		a.mode = m
	}
	count := 0
	for _, k := range []string{"contents", "contents_pillar", "contents_grains"} {
		if c.Arg(k) != nil {
			count++
		}
	}
	hasSource := modules.Truthy(a.source)
	switch {
	case hasSource && count > 0:
		return nil, fail(name, "'source' cannot be used in combination with 'contents', 'contents_pillar', or 'contents_grains'")
	case keepMode && count > 0:
		return nil, fail(name, "Mode preservation cannot be used in combination with 'contents', 'contents_pillar', or 'contents_grains'")
	case count > 1:
		return nil, fail(name, "Only one of 'contents', 'contents_pillar', and 'contents_grains' is permitted")
	}
	if hasSource && a.sourceHash != "" && !isRemote(ordered.KeyString(a.source)) {
		logWarn(c, "source_hash is only used with 'http', 'https' or 'ftp'")
	}
	if !hasSource && count == 0 && a.replace {
		a.replace = false
	}
	use, res := useContents(c, name)
	if res != nil {
		return nil, res
	}
	if use != nil {
		s, res := buildContents(ctx, c, a, use)
		if res != nil {
			return nil, res
		}
		a.contents = &s
	}
	return a, nil
}

// useContents picks contents, contents_pillar or contents_grains.
func useContents(c *states.Call, name string) (any, *states.Result) {
	delim := c.Str("contents_delimiter")
	lookup := func(arg, kind string, data *ordered.Map) (any, *states.Result) {
		keys, isList := c.Arg(arg).([]any)
		if !isList {
			keys = []any{c.Arg(arg)}
		}
		var parts []string
		var single any
		for _, k := range keys {
			v, ok := traverse(data, ordered.KeyString(k), delim)
			if !ok {
				return nil, fail(name, fmt.Sprintf("%s %s does not exist", kind, ordered.KeyString(k)))
			}
			single = v
			parts = append(parts, py.Str(v))
		}
		if isList {
			return strings.Join(parts, "\n"), nil
		}
		return single, nil
	}
	switch {
	case c.Arg("contents_pillar") != nil:
		return lookup("contents_pillar", "Pillar", c.Env.Pillar)
	case c.Arg("contents_grains") != nil:
		return lookup("contents_grains", "Grain", c.Env.Grains())
	}
	return c.Arg("contents"), nil
}

// buildContents is managed's contents normalization: every line ends in
// a newline (contents_newline: False strips the last one), lists are
// joined, and a template renders the result.
func buildContents(ctx context.Context, c *states.Call, a *managedArgs, use any) (string, *states.Result) {
	if !c.Bool("allow_empty") && !modules.Truthy(use) {
		id := "'contents'"
		if v := c.Arg("contents_pillar"); modules.Truthy(v) {
			id = "contents_pillar " + py.Str(v)
		} else if v := c.Arg("contents_grains"); modules.Truthy(v) {
			id = "contents_grains " + py.Str(v)
		}
		return "", fail(a.name, id+" value would result in empty contents. Set allow_empty to True to allow the managed file to be empty.")
	}
	var parts []string
	switch v := use.(type) {
	case []any:
		for _, item := range v {
			parts = append(parts, py.Str(item))
		}
	default:
		parts = []string{py.Str(v)}
	}
	var b strings.Builder
	for _, part := range parts {
		for _, l := range file.SplitLines(part) {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	s := b.String()
	if !c.Bool("contents_newline") {
		s = strings.TrimSuffix(strings.TrimSuffix(s, "\n"), "\r")
	}
	if a.template != "" {
		out, err := file.RenderTemplate(ctx, c.Env, a.template, s, file.TemplateVars{
			Saltenv: a.saltenv, Defaults: a.defaults, Context: a.context, Contents: true,
		})
		if err != nil {
			return "", fail(a.name, err.Error())
		}
		s = out
	}
	return s, nil
}

// getManaged is file.get_managed: fetch the source and render it.
func getManaged(ctx context.Context, c *states.Call, a *managedArgs, src string) (*file.Source, string, error) {
	if src == "" {
		return nil, "", nil
	}
	var htype, hsum string
	verify := isRemote(src) && !c.Bool("skip_verify")
	if verify {
		if a.sourceHash == "" {
			return nil, fmt.Sprintf("Unable to verify upstream hash of source file %s, please set source_hash or set skip_verify to True", src), nil
		}
		var err error
		htype, hsum, err = file.SourceSum(ctx, c.Env, a.name, src, a.sourceHash, c.Str("source_hash_name"), a.saltenv)
		if err != nil {
			return nil, err.Error(), nil
		}
	}
	data, comment, err := file.FetchSource(ctx, c.Env, src, a.saltenv)
	if err != nil || comment != "" {
		return nil, comment, err
	}
	if verify {
		if dl, _ := file.HashBytes(data, htype); dl != hsum {
			if pathExists(a.name) {
				return nil, fmt.Sprintf("Specified %s checksum for %s (%s) does not match actual checksum (%s). "+
					"If the 'source_hash' value refers to a remote file with multiple possible matches, "+
					"then it may be necessary to set 'source_hash_name'.", htype, src, hsum, dl), nil
			}
			return nil, fmt.Sprintf("Specified %s checksum for %s (%s) does not match actual checksum (%s)", htype, a.name, hsum, dl), nil
		}
	}
	if a.template != "" {
		out, err := file.RenderTemplate(ctx, c.Env, a.template, string(data), file.TemplateVars{
			Name: a.name, Source: src, Saltenv: a.saltenv, User: a.user, Group: a.group, Mode: a.mode,
			Defaults: a.defaults, Context: a.context,
		})
		if err != nil {
			var ee *modules.ExecutionError
			if errors.As(err, &ee) {
				return nil, ee.Msg, nil
			}
			return nil, "", err
		}
		data = []byte(out)
	}
	return &file.Source{URL: src, Data: data, Fetched: true}, "", nil
}

// managedPermsOnly handles replace: False on an existing file: only the
// ownership and mode are managed.
func managedPermsOnly(c *states.Call, a *managedArgs, ret *file.Ret) (*states.Result, error) {
	ret, perms, err := file.CheckPerms(a.name, ret, a.user, a.group, a.mode, a.follow, c.Env.Test)
	if err != nil {
		return nil, err
	}
	switch {
	case c.Env.Test:
		if m, ok := a.mode.(string); ok && perms != nil && m != perms.LMode {
			ret.Comment = fmt.Sprintf("File %s will be updated with permissions %s from its current state of %s", a.name, m, perms.LMode)
		} else {
			ret.Comment = fmt.Sprintf("File %s not updated", a.name)
		}
	case ret.Changes.Len() == 0 && ret.Result == true:
		ret.Comment = fmt.Sprintf("File %s exists with proper permissions. No changes made.", a.name)
	}
	return result(ret), nil
}

// managedTest is the test=True branch: check_managed_changes predicts
// the changes without touching the file.
func managedTest(ctx context.Context, c *states.Call, a *managedArgs, ret *file.Ret) (*states.Result, error) {
	src, sourceHash, err := file.SourceList(ctx, c.Env, a.source, a.sourceHash, a.saltenv)
	if err != nil {
		return fail(a.name, "Unable to manage file: "+err.Error()), nil
	}
	a.sourceHash = sourceHash
	var want []byte
	if a.contents != nil {
		want = []byte(*a.contents)
	} else if src != "" {
		source, comment, err := getManaged(ctx, c, a, src)
		if err != nil {
			return fail(a.name, "Unable to manage file: "+err.Error()), nil
		}
		if comment != "" {
			return fail(a.name, comment), nil
		}
		want = source.Data
		if a.keepMode {
			a.mode = sourceMode(c, src, a.saltenv)
		}
	}
	changes := file.CheckFileMeta(a.name, want, a.user, a.group, a.mode, a.follow)
	ret.Changes = changes
	switch {
	case changes.Len() > 0:
		ret.Result = nil
		ret.Comment = fmt.Sprintf("The file %s is set to be changed\nNote: No changes made, actual changes may\nbe different due to other states.", a.name)
		if changes.Has("diff") && !c.Bool("show_changes") {
			changes.Set("diff", "<show_changes=False>")
		}
	default:
		ret.Comment = fmt.Sprintf("The file %s is in the correct state", a.name)
	}
	return result(ret), nil
}

func isRemote(src string) bool {
	for _, p := range []string{"http://", "https://", "ftp://", "s3://", "swift://"} {
		if strings.HasPrefix(src, p) {
			return true
		}
	}
	return false
}

// checkCmd is managed's check_cmd: the new content is first written to a
// temporary file (in tmp_dir, ending in tmp_ext) and check_cmd runs on
// it; a failing command fails the state before the real file is
// touched.
func checkCmd(ctx context.Context, c *states.Call, m file.Manage, cmd string) (*states.Result, error) {
	tmp, err := os.CreateTemp(c.Str("tmp_dir"), "__salt.tmp.*"+c.Str("tmp_ext"))
	if err != nil {
		return fail(m.Name, "Unable to check_cmd file: "+err.Error()), nil
	}
	tmpName := tmp.Name()
	tmp.Close()
	defer os.Remove(tmpName)
	if b, err := os.ReadFile(m.Name); err == nil {
		if err := os.WriteFile(tmpName, b, 0o600); err != nil {
			return fail(m.Name, fmt.Sprintf("Unable to copy file %s to %s: %s", m.Name, tmpName, err.Error())), nil
		}
	}
	tm := m
	tm.Name, tm.User, tm.Group, tm.Mode, tm.Backup = tmpName, nil, nil, nil, ""
	tret, err := file.ManageFile(tm, nil)
	if err != nil {
		return fail(m.Name, "Unable to check_cmd file: "+err.Error()), nil
	}
	if tret.Changes.Len() == 0 {
		return nil, nil
	}
	return runCheckCmd(ctx, c, cmd, tmpName)
}

// runCheckCmd is mod_run_check_cmd: nil when "<cmd> <filename>" exits 0.
func runCheckCmd(ctx context.Context, c *states.Call, cmd, filename string) (*states.Result, error) {
	spec := shell.Spec{Cmd: cmd + " " + filename}
	if sh, ok := c.Env.Grains().Value("shell").(string); ok {
		spec.Shell = sh
	}
	out, err := shell.Run(ctx, spec)
	if err != nil {
		return nil, fmt.Errorf("run check_cmd: %w", err)
	}
	if out.Retcode == 0 {
		return nil, nil
	}
	r := states.NewResult(c.Arg("name"), states.False, "check_cmd execution failed")
	if out.Stdout != "" {
		r.Comment += "\n" + out.Stdout
	}
	if out.Stderr != "" {
		r.Comment += "\n" + out.Stderr
	}
	r.Extra = ordered.FromPairs("skip_watch", true)
	return r, nil
}

// modRunCheckCmd is file.mod_run_check_cmd, which tells the state runner
// that file states run check_cmd themselves.
func modRunCheckCmd(ctx context.Context, c *states.Call) (*states.Result, error) {
	r, err := runCheckCmd(ctx, c, c.Str("cmd"), c.Str("filename"))
	if err != nil || r != nil {
		return r, err
	}
	return states.NewResult(c.Arg("filename"), states.True, ""), nil
}

// localPather is implemented by file clients that serve salt:// from
// local disk (state/fileclient.Client); mode: keep needs it to stat the
// source as Salt's cp.stat_file does.
type localPather interface {
	LocalPath(url, saltenv string) string
}

// sourceMode is cp.stat_file(source, octal=True) for mode: keep: the
// source's permission bits, or nil when they cannot be read.
func sourceMode(c *states.Call, src, saltenv string) any {
	p := strings.TrimPrefix(src, "file://")
	if strings.HasPrefix(src, "salt://") {
		lp, ok := c.Env.Files.(localPather)
		if !ok {
			return nil
		}
		p = lp.LocalPath(src, saltenv)
	}
	st, err := file.Stats(p, "", true)
	if err != nil {
		return nil
	}
	return st.Mode
}

// remoteHashMatches is managed's shortcut for a remote source with a
// source_hash: when the existing file already has that hash, only its
// permissions are managed and nothing is downloaded.
func remoteHashMatches(ctx context.Context, c *states.Call, a *managedArgs) bool {
	if c.Bool("skip_verify") || a.sourceHash == "" || !modules.Truthy(a.source) {
		return false
	}
	src, hash, err := file.SourceList(ctx, c.Env, a.source, a.sourceHash, a.saltenv)
	if err != nil || !isRemote(src) || hash == "" {
		return false
	}
	htype, hsum, err := file.SourceSum(ctx, c.Env, a.name, src, hash, c.Str("source_hash_name"), a.saltenv)
	if err != nil {
		return false
	}
	have, err := file.GetHash(a.name, htype)
	return err == nil && have == hsum
}
