package apply

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/compile"
	"github.com/brinesalt/brine/state/coregrains"
	"github.com/brinesalt/brine/state/fileclient"
	"github.com/brinesalt/brine/state/jinja"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/pillar"
	"github.com/brinesalt/brine/state/render"
	"github.com/brinesalt/brine/state/run"
	"github.com/brinesalt/brine/state/states"
	"github.com/brinesalt/brine/state/target"
)

// job is one state function call: the environment, the file server, the
// compiled pillar and the test flag (Salt's HighState with its State).
type job struct {
	env      *modules.Env
	files    fileSource
	pillar   *ordered.Map
	test     bool
	mock     bool
	terse    bool
	saltenv  string
	failhard bool
	states   *states.Registry
	log      *slog.Logger
	plan     *PlanResult
	// topFile and topSaltenv replace top.sls for state.top.
	topFile, topSaltenv string
	// override is the job's pillar= argument, merged again when a state
	// asks for reload_pillar.
	override *ordered.Map
}

func optsStrings(v any) []string {
	var out []string
	switch x := v.(type) {
	case string:
		out = append(out, x)
	case []any:
		for _, e := range x {
			out = append(out, ordered.KeyString(e))
		}
	}
	return out
}

// roots reads a file_roots/pillar_roots style option.
func roots(opts *ordered.Map, key string) (map[string][]string, []string) {
	m := map[string][]string{}
	var order []string
	if r, ok := opts.Value(key).(*ordered.Map); ok {
		r.Range(func(k, v any) bool {
			env := ordered.KeyString(k)
			m[env] = optsStrings(v)
			order = append(order, env)
			return true
		})
	}
	return m, order
}

func (m *module) newJob(ctx context.Context, env *modules.Env, kw *ordered.Map, test any) (*job, error) {
	opts := env.Opts
	if opts == nil {
		opts = ordered.New()
	}
	j := &job{env: env, files: jobFiles(env, opts), states: m.states, log: env.Log, plan: m.plan}
	if j.log == nil {
		j.log = slog.New(slog.DiscardHandler)
	}
	j.test = testValue(test, kw, opts)
	j.mock = modules.Truthy(kw.Value("mock"))
	j.terse = modules.Truthy(kw.Value("terse"))
	j.failhard = modules.Truthy(opts.Value("failhard"))
	if s, ok := opts.Value("saltenv").(string); ok {
		j.saltenv = s
	}
	if s, ok := kw.Value("saltenv").(string); ok {
		j.saltenv = s
	}
	var override *ordered.Map
	if p, ok := kw.Get("pillar"); ok && p != nil {
		m, ok := p.(*ordered.Map)
		if !ok {
			return nil, modules.Invalidf("Pillar data must be formatted as a dictionary, unless pillar_enc is specified.")
		}
		override = m
	}
	if pe, ok := kw.Value("pillarenv").(string); ok && pe != "" {
		opts = opts.Copy()
		opts.Set("pillarenv", pe)
		envCopy := *env
		envCopy.Opts = opts
		j.env = &envCopy
	}
	j.override = override
	p, err := j.compilePillar(ctx, override)
	if err != nil {
		return nil, err
	}
	j.pillar = p
	return j, nil
}

// fileSource is what the state compiler and the renderers need of a
// file client: SLS lookup and listing plus the local path of a file.
// state/fileclient's Client (file_roots) and RemoteClient (the
// master's file server) both are one.
type fileSource interface {
	compile.Source
	modules.FileClient
	LocalPath(url, saltenv string) string
}

// jobFiles is the job's file server: the environment's file client when
// it can serve SLS files (a minion's RemoteClient), else the file_roots
// option.
func jobFiles(env *modules.Env, opts *ordered.Map) fileSource {
	if fs, ok := env.Files.(fileSource); ok {
		return fs
	}
	fr, order := roots(opts, "file_roots")
	return fileclient.New(fr, order)
}

// testValue is _get_test_value: an explicit test wins, then a test=
// keyword, then the minion's test option.
func testValue(test any, kw *ordered.Map, opts *ordered.Map) bool {
	if test == nil {
		if t, ok := kw.Get("test"); ok && modules.Truthy(t) {
			return true
		}
		return modules.Truthy(opts.Value("test"))
	}
	return test != false
}

func (j *job) minion(p *ordered.Map) *target.Minion {
	id, _ := j.env.Opts.Value("id").(string)
	return &target.Minion{ID: id, Grains: j.env.Grains(), Pillar: p}
}

// matcher matches top file targets with Salt's matchers.
func (j *job) matcher(p *ordered.Map) compile.MatchFunc {
	return func(tgt any, kind string) (bool, error) {
		k, err := target.ParseKind(kind)
		if err != nil {
			return false, err
		}
		ok, err := target.Match(tgt, k, j.minion(p), target.Options{})
		if err != nil {
			j.log.Error(fmt.Sprintf("Attempting to match with unknown matcher: %s", kind))
			return false, nil
		}
		return ok, nil
	}
}

func (j *job) compilePillar(ctx context.Context, override *ordered.Map) (*ordered.Map, error) {
	if src := j.env.PillarSource; src != nil {
		pe, _ := j.env.Opts.Value("pillarenv").(string)
		return src.CompilePillar(ctx, override, pe)
	}
	pr, order := roots(j.env.Opts, "pillar_roots")
	pfiles := fileclient.New(pr, order)
	c := &pillar.Compiler{Files: pfiles, Override: override, Log: j.log, Opts: j.env.Opts,
		Render: j.renderFunc(pfiles, func() *ordered.Map {
			if override != nil {
				return override
			}
			return ordered.New()
		})}
	c.Match = j.matcher(override)
	if pe, ok := j.env.Opts.Value("pillarenv").(string); ok {
		c.Saltenv = pe
	}
	return c.Compile(ctx)
}

// jinja renders SLS templates with Salt's caller and a loader over files.
func (j *job) jinja(files fileSource, saltenv string, env *modules.Env) render.JinjaFunc {
	return func(ctx context.Context, src, name string, vars map[string]any) (string, error) {
		loader := func(n string) ([]byte, string, error) {
			b, ok, err := files.ReadFile(ctx, n, saltenv)
			if err != nil {
				return nil, "", err
			}
			if !ok {
				return nil, "", fmt.Errorf("%s: %w", n, jinja.ErrTemplateNotFound)
			}
			return b, n, nil
		}
		return jinja.Render(ctx, src, jinja.Options{Name: name, Vars: vars, Salt: modules.SaltFuncs{Env: env}, Loader: loader})
	}
}

// renderFunc renders SLS files of files with the Jinja context Salt gives
// them: grains, pillar, opts, salt and the SLS path variables.
func (j *job) renderFunc(files fileSource, pillarData func() *ordered.Map) compile.RenderFunc {
	r := &render.Renderer{Log: j.log}
	if d, ok := j.env.Opts.Value("renderer").(string); ok {
		r.Default = d
	}
	return func(ctx context.Context, src []byte, rel, saltenv, sls string) (any, error) {
		env := *j.env
		env.Pillar = pillarData()
		rr := *r
		rr.Jinja = j.jinja(files, saltenv, &env)
		path := files.LocalPath("salt://"+rel, saltenv)
		if sls == "top" && rel == "top.sls" {
			sls = ""
		}
		return rr.Render(ctx, src, render.Context{Saltenv: saltenv, SLS: sls, Rel: rel, Path: path, Vars: map[string]any{
			"grains": j.env.Grains(), "pillar": env.Pillar, "opts": j.env.Opts,
		}})
	}
}

func (j *job) highstate() *compile.HighState {
	hs := compile.NewHighState(j.files, j.renderFunc(j.files, func() *ordered.Map { return j.pillar }), j.matcher(j.pillar))
	hs.Saltenv = j.saltenv
	hs.TopFile, hs.TopSaltenv = j.topFile, j.topSaltenv
	hs.Log = j.log
	if v, ok := j.env.Opts.Get("state_auto_order"); ok {
		hs.AutoOrder = modules.Truthy(v)
	}
	return hs
}

func (j *job) runner() *run.Runner {
	env := *j.env
	env.Test = j.test
	env.Pillar = j.pillar
	if env.Files == nil {
		env.Files = j.files
	}
	return &run.Runner{States: j.states, Env: &env, Failhard: j.failhard, Log: j.log, Template: j.template(&env), Mock: j.mock,
		Refresh: j.refresh}
}

// refresh is the reload_grains and reload_pillar half of check_refresh:
// grains are gathered again as the job's caller gathered them at start
// (core grains, the grains file, the `grains:` option), keeping the
// values of grains that only the start-up gathering had (custom grain
// executables run by the thin binary); pillar is compiled again with the
// job's pillar= override. A failure keeps the old data and is logged,
// as Salt logs and goes on.
func (j *job) refresh(ctx context.Context, env *modules.Env, reGrains, rePillar bool) {
	if reGrains {
		g, err := coregrains.Gather(ctx, coregrains.GatherOptions{Opts: env.Opts})
		if err != nil || g == nil {
			j.log.Error("Unable to refresh grains", logattr.Err, err)
		} else {
			merged := env.Grains().Copy()
			g.Range(func(k, v any) bool { merged.Set(k, v); return true })
			if id, ok := env.Opts.Get("id"); ok {
				merged.Set("id", id)
			}
			env.SetGrains(merged)
		}
	}
	if rePillar {
		p, err := j.compilePillar(ctx, j.override)
		if err != nil {
			j.log.Error("Unable to refresh pillar", logattr.Err, err)
			return
		}
		j.pillar, env.Pillar = p, p
	}
}

// template renders file templates with Salt's context: grains, pillar,
// opts, salt and saltenv, under the caller's vars.
func (j *job) template(env *modules.Env) states.TemplateFunc {
	return func(ctx context.Context, engine, src, name string, vars map[string]any) (string, error) {
		if engine != "jinja" {
			return "", fmt.Errorf("the %q template engine is not supported", engine)
		}
		saltenv := "base"
		if s, ok := vars["saltenv"].(string); ok && s != "" {
			saltenv = s
		}
		all := map[string]any{"grains": env.Grains(), "pillar": env.Pillar, "opts": env.Opts, "saltenv": saltenv}
		for k, v := range vars {
			all[k] = v
		}
		return j.jinja(j.files, saltenv, env)(ctx, src, name, all)
	}
}

// pillarErrors returns the pillar's _errors unless force is set.
func (j *job) pillarErrors(kw *ordered.Map) []any {
	if modules.Truthy(kw.Value("force")) {
		return nil
	}
	l, _ := j.pillar.Value("_errors").([]any)
	return l
}

// splitInput is salt.utils.args.split_input: a comma-separated string or a list.
func splitInput(v any) []any {
	switch x := v.(type) {
	case nil:
		return nil
	case []any:
		return x
	case string:
		var out []any
		for _, s := range strings.Split(x, ",") {
			out = append(out, strings.TrimSpace(s))
		}
		return out
	}
	return []any{ordered.KeyString(v)}
}

func splitStrings(v any) []string {
	var out []string
	for _, x := range splitInput(v) {
		out = append(out, ordered.KeyString(x))
	}
	return out
}

// CompilePillar compiles the minion's pillar from the pillar_roots of
// env.Opts, as the minion does at start-up, with override merged over it.
func CompilePillar(ctx context.Context, env *modules.Env, override *ordered.Map) (*ordered.Map, error) {
	j := &job{env: env, log: env.Log}
	if j.log == nil {
		j.log = slog.New(slog.DiscardHandler)
	}
	if j.env.Opts == nil {
		j.env.Opts = ordered.New()
	}
	return j.compilePillar(ctx, override)
}
