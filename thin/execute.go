package thin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/state/coregrains"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/modules/saltutil/proc"
	"github.com/brinesalt/brine/thin/frame"
)

// Options configures Execute.
type Options struct {
	// Registry resolves function names; nil means modules.Default.
	Registry *modules.Registry
	// Gather returns the host's complete grains. nil means Salt's
	// sequence: core grains (grains.Gather), then the custom grain
	// executables synced into <extension_modules>/grains
	// (proc.LoadCustomGrains), then the grains file, then the
	// `grains:` option.
	Gather func(ctx context.Context, o coregrains.GatherOptions) (*ordered.Map, error)
	// Jobs is where the job is registered while it runs, so that
	// saltutil.running, find_job and kill_job see it; nil means
	// proc.Jobs. A job whose JID is registered already (by the
	// minion running it) is left to its owner.
	Jobs *proc.JobRegistry
	// Log receives log lines at the job's log_level option (default
	// quiet, as salt-ssh runs salt-call with -l quiet).
	Log io.Writer
	// Logger, when set, receives the job's log lines instead of Log: a
	// minion's jobs log to the minion's own log, as Salt's jobs log
	// through the minion's logging.
	Logger *slog.Logger
	// Files serves salt:// URLs to the job; nil means the files shipped
	// with the job, then the file_roots option. A minion passes the
	// master's file server (state/fileclient.RemoteClient).
	Files modules.FileClient
	// Pillar compiles pillar for state runs; nil means the pillar_roots
	// option. A minion passes a source asking the master.
	Pillar modules.PillarSource
	// Minion is the minion daemon running the job, whose grains and
	// pillar the refresh functions reload; nil for salt-call and the
	// thin binary.
	Minion modules.Refresher
}

// Execute runs job and returns its result in Salt's minion return shape.
// Failures of the function are data in the result, never a Go error:
// the return holds Salt's error text and the retcode is 1
// (salt/minion.py _thread_return).
func Execute(ctx context.Context, job *frame.Job, o Options) *frame.Result {
	res := &frame.Result{ID: job.ID, JID: job.JID, Fun: job.Fun}
	if res.JID == "" {
		res.JID = NewJID(time.Now())
	}
	jobs := o.Jobs
	if jobs == nil {
		jobs = proc.Jobs
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if _, owned := jobs.Find(res.JID); !owned {
		// salt-call's proc data names the target "salt-call".
		done := jobs.Add(proc.Job{JID: res.JID, Fun: job.Fun, Arg: job.Arg, Tgt: "salt-call", Cancel: cancel})
		defer done()
	}
	env := o.env(ctx, job)
	env.Context[proc.ContextKey] = jobs
	if res.ID == "" {
		res.ID, _ = env.Opts.Value("id").(string)
	}
	res.Return, res.Retcode = run(ctx, env, job, res.JID)
	if f, err := env.Registry.Lookup(env, job.Fun); err == nil {
		res.Out = f.Outputter
	}
	switch {
	case job.Data.Value(frame.ReturnGrains) == true:
		res.Grains = env.Grains()
	case job.Data.Value(frame.OfferGrains) == true && env.GrainsLoaded():
		res.Grains = env.Grains()
	}
	return res
}

func (o Options) env(ctx context.Context, job *frame.Job) *modules.Env {
	reg := o.Registry
	if reg == nil {
		reg = modules.Default
	}
	opts := ordered.New()
	if job.Opts != nil {
		opts = job.Opts.Copy()
	}
	if job.ID != "" {
		opts.Set("id", job.ID)
	}
	log := o.Logger
	if log == nil {
		log = newLogger(o.Log, opts)
	}
	load := func() *ordered.Map {
		g := o.grains(ctx, opts, log)
		coregrains.Overlay(g, job.Grains)
		return g
	}
	pillar := job.Pillar
	if pillar == nil {
		pillar = ordered.New()
	}
	env := &modules.Env{
		Pillar:       pillar,
		Opts:         opts,
		Registry:     reg,
		Test:         modules.Truthy(opts.Value("test")) || modules.Truthy(job.Kwarg.Value("test")),
		Log:          log,
		Files:        o.files(job, opts),
		PillarSource: o.Pillar,
		Context:      map[string]any{},
		Minion:       o.Minion,
	}
	if id, _ := opts.Value("id").(string); id == "" {
		// Salt's get_id falls back to the FQDN when no id is configured,
		// so the grains are needed now.
		g := load()
		if fqdn, ok := g.Value("fqdn").(string); ok && fqdn != "" {
			opts.Set("id", fqdn)
			g.Set("id", fqdn)
		}
		return env.WithGrains(g)
	}
	// Grains are gathered when a function first reads them: test.ping or
	// cmd.run on a host without a grains cache skips the gather (Salt's
	// salt-call loads them for every job).
	env.SetGrainsFunc(load)
	return env
}

func (o Options) files(job *frame.Job, opts *ordered.Map) modules.FileClient {
	if o.Files != nil {
		return o.Files
	}
	return newFileClient(job, opts)
}

// grains returns the host's grains: Options.Gather's, or Salt's
// sequence of core grains, custom grain executables, grains file and
// `grains:` option, each replacing top-level keys of the ones before
// (salt/loader grains() without grains_deep_merge).
func (o Options) grains(ctx context.Context, opts *ordered.Map, log *slog.Logger) *ordered.Map {
	if o.Gather != nil {
		g, err := o.Gather(ctx, coregrains.GatherOptions{Opts: opts})
		if err != nil || g == nil {
			g = ordered.FromPairs("id", opts.Value("id"))
		}
		return g
	}
	return GatherGrains(ctx, opts, log)
}

// GatherGrains returns the host's grains in Salt's order (salt/loader
// grains()): core grains (grains.Gather), then the custom grain
// executables synced into <extension_modules>/grains, then the grains
// file, then the `grains:` option, each replacing top-level keys of
// the ones before. A failing custom grain is logged and left out.
// Whatever keeps grains between jobs (the minion) can gather them with
// it once and pass them as Options.Gather.
func GatherGrains(ctx context.Context, opts *ordered.Map, log *slog.Logger) *ordered.Map {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return customGrains(ctx, coregrains.Gather, opts, log)
}

// customGrains gathers core grains with core and applies the custom
// ones over them in Salt's order.
func customGrains(ctx context.Context, core func(context.Context, coregrains.GatherOptions) (*ordered.Map, error), opts *ordered.Map, log *slog.Logger) *ordered.Map {
	g, err := core(ctx, coregrains.GatherOptions{Opts: opts, SkipCustom: true})
	if err != nil || g == nil {
		g = ordered.FromPairs("id", opts.Value("id"))
	}
	custom, err := proc.LoadCustomGrains(ctx, proc.GrainsDir(opts))
	if err != nil {
		log.Error("custom grains failed", logattr.Err, err)
	}
	coregrains.Overlay(g, custom)
	if file, err := coregrains.LoadFile(coregrains.GrainsFilePath(opts)); err == nil {
		coregrains.Overlay(g, file)
	} else if !errors.Is(err, fs.ErrNotExist) {
		log.Error("grains file", logattr.Err, err)
	}
	if static, ok := opts.Value("grains").(*ordered.Map); ok {
		coregrains.Overlay(g, static)
	}
	return g
}

func newLogger(w io.Writer, opts *ordered.Map) *slog.Logger {
	lvl, _ := opts.Value("log_level").(string)
	var level slog.Level
	switch strings.ToLower(lvl) {
	case "", "quiet":
		w = nil
	case "critical", "error":
		level = slog.LevelError
	case "warning", "warn":
		level = slog.LevelWarn
	case "info", "profile":
		level = slog.LevelInfo
	default:
		level = slog.LevelDebug
	}
	if w == nil {
		w = io.Discard
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}

// run looks the function up, binds its arguments and calls it, turning
// every failure into Salt's return text and retcode.
func run(ctx context.Context, env *modules.Env, job *frame.Job, jid string) (ret any, retcode int) {
	f, err := env.Registry.Lookup(env, job.Fun)
	if err != nil {
		return missing(env, job.Fun, err), ExGeneric
	}
	kwargs := ordered.New()
	var invalid []string
	job.Kwarg.Range(func(k, v any) bool {
		key := ordered.KeyString(k)
		if !f.Spec.VarKw && !strings.HasPrefix(key, "__") && !hasParam(f, key) {
			invalid = append(invalid, key+"="+py.Str(v))
		}
		kwargs.Set(k, v)
		return true
	})
	if len(invalid) > 0 {
		return failure(f, modules.Invalidf("The following keyword arguments are not valid: %s", strings.Join(invalid, ", "))), ExGeneric
	}
	for _, kv := range [][2]any{{"__pub_fun", job.Fun}, {"__pub_pid", os.Getpid()}, {"__pub_jid", jid}, {"__pub_tgt", "salt-call"}} {
		kwargs.Set(kv[0], kv[1])
	}
	args := job.Arg
	if args == nil {
		args = []any{}
	}
	c, err := f.Bind(env, args, kwargs)
	if err != nil {
		return failure(f, err), ExGeneric
	}
	env.Context["retcode"] = 0
	ret, err = call(ctx, f, c)
	if err != nil {
		return failure(f, err), ExGeneric
	}
	return ret, retcodeOf(env, ret)
}

// call runs f, turning a panic into an error as Python turns a crash
// into an exception.
func call(ctx context.Context, f *modules.Function, c *modules.Call) (ret any, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	return f.Fn(ctx, c)
}

// retcodeOf is salt/minion.py's rule: a non-zero __context__["retcode"]
// wins; otherwise a dict return whose "result" or "success" is false
// gives 1.
func retcodeOf(env *modules.Env, ret any) int {
	if rc, ok := env.Context["retcode"].(int); ok && rc != 0 {
		return rc
	}
	if m, ok := ret.(*ordered.Map); ok {
		for _, k := range []string{"result", "success"} {
			if v, ok := m.Get(k); ok && !modules.Truthy(v) {
				return ExGeneric
			}
		}
	}
	return ExOK
}

// failure words an error as salt/minion.py _thread_return does for each
// exception class.
func failure(f *modules.Function, err error) string {
	var argErr *modules.ArgError
	var execErr *modules.ExecutionError
	var invErr *modules.InvocationError
	switch {
	case errors.As(err, &argErr):
		return argErr.Error() + "\n" + f.Doc
	case errors.As(err, &execErr):
		return "ERROR: " + execErr.Error()
	case errors.As(err, &invErr):
		return fmt.Sprintf("ERROR executing '%s': %s", f.Name, invErr.Error())
	}
	return "The minion function caused an exception: " + err.Error()
}

// missing is the return for an unknown function: the docs of functions
// whose names start with it, plus the error under its own name, or the
// bare error when nothing matches (salt/minion.py, sys.doc(fun + "*")).
func missing(env *modules.Env, name string, err error) any {
	docs := ordered.New()
	for _, n := range env.Registry.Names(env) {
		if strings.HasPrefix(n, name) {
			if f, lerr := env.Registry.Lookup(env, n); lerr == nil {
				docs.Set(n, f.Doc)
			}
		}
	}
	if docs.Len() == 0 {
		return err.Error()
	}
	docs.Set(name, err.Error())
	return docs
}

func hasParam(f *modules.Function, name string) bool {
	for _, p := range f.Spec.Params {
		if p.Name == name {
			return true
		}
	}
	return false
}

// NewJID returns a Salt job id for t: YYYYMMDDhhmmssffffff
// (salt/utils/jid.py gen_jid).
func NewJID(t time.Time) string {
	t = t.UTC()
	return fmt.Sprintf("%s%06d", t.Format("20060102150405"), t.Nanosecond()/1000)
}
