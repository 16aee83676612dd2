// Command salt-call runs an execution function on this host, as Salt's
// salt-call: it reads the minion configuration, gathers grains, gets
// pillar, calls the function and prints its return through an
// outputter. With --local (file_client: local) pillar is compiled from
// pillar_roots and salt:// files come from file_roots; otherwise it
// signs in to the master as the minion and both come from the master,
// files cached under the cachedir.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/brinesalt/brine/internal/config"
	"github.com/brinesalt/brine/internal/logging"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/saltyaml"
	"github.com/brinesalt/brine/internal/shutdown"
	"github.com/brinesalt/brine/internal/version"
	"github.com/brinesalt/brine/minion"
	"github.com/brinesalt/brine/state/apply"
	"github.com/brinesalt/brine/state/compile"
	"github.com/brinesalt/brine/state/coregrains"
	"github.com/brinesalt/brine/state/fileclient"
	"github.com/brinesalt/brine/state/modules"
	_ "github.com/brinesalt/brine/state/modules/allmodules"
	_ "github.com/brinesalt/brine/state/pillar/module"
	"github.com/brinesalt/brine/state/states"
	_ "github.com/brinesalt/brine/state/states/allstates"
)

func main() {
	ctx, stop := shutdown.Context(nil, "")
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// options are salt-call's command-line options.
type options struct {
	local        bool
	configDir    string
	out          string
	logLevel     string
	passthrough  bool
	fileRoot     string
	pillarRoot   string
	id           string
	outIndent    int
	outIndentSet bool
	noColor      bool
	forceColor   bool
	stateOutput  string
	stateVerbose string
	version      bool
	grains       bool
}

func newFlagSet(o *options, stderr io.Writer) *pflag.FlagSet {
	fs := pflag.NewFlagSet("salt-call", pflag.ContinueOnError)
	fs.SetInterspersed(true)
	fs.SetOutput(stderr)
	fs.BoolVar(&o.local, "local", false, "run without a master (file_client: local)")
	fs.StringVarP(&o.configDir, "config-dir", "c", config.DefaultDir, "directory holding the minion configuration")
	fs.StringVar(&o.out, "out", "", "outputter (json, highstate, nested, yaml, txt, raw)")
	fs.StringVar(&o.out, "output", "", "alias of --out")
	fs.StringVarP(&o.logLevel, "log-level", "l", "", "console log level")
	fs.BoolVar(&o.passthrough, "retcode-passthrough", false, "exit with the function's retcode")
	fs.StringVar(&o.fileRoot, "file-root", "", "file_roots base directory")
	fs.StringVar(&o.pillarRoot, "pillar-root", "", "pillar_roots base directory")
	fs.StringVar(&o.id, "id", "", "minion id")
	fs.IntVar(&o.outIndent, "out-indent", 4, "indentation of json output")
	fs.BoolVar(&o.noColor, "no-color", false, "disable colors")
	fs.BoolVar(&o.forceColor, "force-color", false, "force colors")
	fs.StringVar(&o.stateOutput, "state-output", "", "highstate output mode: full, terse, mixed, changes or filter (each with an optional _id)")
	fs.StringVar(&o.stateVerbose, "state-verbose", "", "set to False to hide states that succeeded without changes")
	fs.BoolVarP(&o.version, "version", "V", false, "print the Salt version Brine emulates")
	fs.BoolVarP(&o.grains, "grains", "g", false, "print the grains and exit")
	return fs
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var o options
	fs := newFlagSet(&o, stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		return 2
	}
	o.outIndentSet = fs.Changed("out-indent")
	if o.version {
		fmt.Fprintf(stdout, "salt-call %s (Brine %s)\n", version.Salt, version.Brine)
		return 0
	}
	rest := fs.Args()
	if o.grains {
		rest = []string{"grains.items"}
	}
	if len(rest) == 0 {
		fmt.Fprintln(stderr, "Usage: salt-call [options] <function> [arguments]")
		return 2
	}
	bootLog, _ := logging.New(stderr, "warning")
	opts, err := loadConfig(o.configDir, bootLog)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	applyFlags(opts, &o)
	level := o.logLevel
	if level == "" {
		level, _ = opts.Value("log_level").(string)
	}
	log, err := logging.New(stderr, level)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	var mn *minion.Minion
	if fc, _ := opts.Value("file_client").(string); fc != "local" {
		var code int
		if mn, code = connect(ctx, &o, log, stderr); mn == nil {
			return code
		}
		defer mn.Close()
	}
	env, err := newEnv(ctx, opts, log, mn)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	fun := rest[0]
	ret, rc, code, done := call(ctx, env, fun, rest[1:], stdout, stderr)
	if done {
		return code
	}
	if err := display(stdout, fun, ret, rc, o, opts, env); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if o.passthrough {
		return rc
	}
	if rc != 0 {
		return 1
	}
	return 0
}

func applyFlags(opts *ordered.Map, o *options) {
	if o.fileRoot != "" {
		abs, _ := filepath.Abs(o.fileRoot)
		opts.Set("file_roots", ordered.FromPairs("base", []any{abs}))
	}
	if o.pillarRoot != "" {
		abs, _ := filepath.Abs(o.pillarRoot)
		opts.Set("pillar_roots", ordered.FromPairs("base", []any{abs}))
	}
	if o.local {
		opts.Set("file_client", "local")
		opts.Set("local", true)
	}
	if o.id != "" {
		opts.Set("id", o.id)
	}
	if o.logLevel != "" {
		opts.Set("log_level", o.logLevel)
	}
}

// connect signs in to the master as this minion (salt-call without
// --local): files and pillar then come from the master. A key the
// master has not accepted ends salt-call with Salt's message and
// status 2 (salt/crypt.py SAuth for a caller).
func connect(ctx context.Context, o *options, log *slog.Logger, stderr io.Writer) (*minion.Minion, int) {
	c, err := config.LoadMinion(o.configDir, log)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return nil, 1
	}
	if o.id != "" {
		c.ID = o.id
	}
	mn, err := minion.New(minion.Options{Config: c, Log: log})
	if err != nil {
		fmt.Fprintln(stderr, err)
		return nil, 1
	}
	if err := mn.Connect(ctx); err != nil {
		mn.Close()
		if errors.Is(err, minion.ErrNotAccepted) {
			fmt.Fprintln(stderr, "Minion failed to authenticate with the master, has the minion key been accepted?")
			return nil, 2
		}
		fmt.Fprintln(stderr, err)
		return nil, 1
	}
	return mn, 0
}

// newEnv gathers grains and compiles pillar into a job environment. With
// a connected minion, salt:// files and pillar come from its master.
func newEnv(ctx context.Context, opts *ordered.Map, log *slog.Logger, mn *minion.Minion) (*modules.Env, error) {
	g, err := coregrains.Gather(ctx, coregrains.GatherOptions{Opts: opts})
	if err != nil || g == nil {
		g = ordered.New()
		if cg, ok := opts.Value("grains").(*ordered.Map); ok {
			cg.Range(func(k, v any) bool { g.Set(k, v); return true })
		}
	}
	g.Set("id", opts.Value("id"))
	fr := map[string][]string{}
	var order []string
	if m, ok := opts.Value("file_roots").(*ordered.Map); ok {
		m.Range(func(k, v any) bool {
			e := ordered.KeyString(k)
			order = append(order, e)
			if l, ok := v.([]any); ok {
				for _, d := range l {
					fr[e] = append(fr[e], ordered.KeyString(d))
				}
			}
			return true
		})
	}
	opts.Set("grains", g)
	env := (&modules.Env{Opts: opts, Registry: modules.Default, Log: log,
		Files: fileclient.New(fr, order), Context: map[string]any{},
		Test: modules.Truthy(opts.Value("test"))}).WithGrains(g)
	if mn != nil {
		env.Files = mn.FileClient(ctx)
		env.PillarSource = mn.PillarSource(g)
		env.MasterLink = mn
	}
	p, err := apply.CompilePillar(ctx, env, nil)
	if err != nil {
		return nil, err
	}
	if errs, ok := p.Value("_errors").([]any); ok {
		for _, e := range errs {
			log.Log(ctx, logging.LevelCritical, "Pillar render error: "+ordered.KeyString(e))
		}
	}
	env.Pillar = p
	opts.Set("pillar", p)
	return env, nil
}

// call runs fun; done reports that salt-call must exit with code now,
// after printing an error as Salt's caller does.
func call(ctx context.Context, env *modules.Env, fun string, argv []string, stdout, stderr io.Writer) (ret any, rc, code int, done bool) {
	f, err := env.Registry.Lookup(env, fun)
	if err != nil {
		fmt.Fprintln(stderr, err.Error())
		return nil, 0, 255, true
	}
	pos, kw := saltyaml.ParseInput(argv)
	if kw == nil {
		kw = ordered.New()
	}
	c, err := f.Bind(env, pos, kw)
	if err != nil {
		fmt.Fprintln(stderr, err.Error())
		return nil, 0, 1, true
	}
	env.Context["retcode"] = 0
	ret, err = safeCall(ctx, f, c)
	if err != nil {
		return nil, 0, callError(fun, f, err, stdout, stderr), true
	}
	rc, _ = env.Context["retcode"].(int)
	if rc == 0 {
		if m, ok := ret.(*ordered.Map); ok {
			for _, k := range []string{"result", "success"} {
				if v, ok := m.Get(k); ok && !modules.Truthy(v) {
					rc = 1
				}
			}
		}
	}
	return ret, rc, 0, false
}

// safeCall runs f, turning a panic into an error.
func safeCall(ctx context.Context, f *modules.Function, c *modules.Call) (ret any, err error) {
	defer func() {
		if p := recover(); p != nil {
			ret, err = nil, fmt.Errorf("the minion function caused an exception: %v", p)
		}
	}()
	return f.Fn(ctx, c)
}

// callError reports a function failure as salt/cli/caller.py does: a
// TypeError (SaltInvocationError included, such as format_call's for a
// state given a keyword argument its function does not take) prints
// "Passed invalid arguments" and the usage, a CommandExecutionError
// "Error running".
func callError(fun string, f *modules.Function, err error, stdout, stderr io.Writer) int {
	var inv *modules.InvocationError
	var badKw *states.InvalidArgsError
	var te *compile.TypeError
	var ex *modules.ExecutionError
	switch {
	case errors.As(err, &inv), errors.As(err, &badKw), errors.As(err, &te):
		fmt.Fprintf(stderr, "\nPassed invalid arguments: %s.\n\nUsage:\n", err.Error())
		fmt.Fprintln(stdout, usage(f))
	case errors.As(err, &ex):
		fmt.Fprintf(stderr, "Error running '%s': %s\n", fun, ex.Error())
	default:
		fmt.Fprintf(stderr, "Error running '%s': %s\n", fun, err.Error())
	}
	return 1
}

func usage(f *modules.Function) string {
	doc := strings.TrimSpace(f.Doc)
	if doc == "" {
		doc = f.Signature()
	}
	return "\n    " + doc + "\n"
}
