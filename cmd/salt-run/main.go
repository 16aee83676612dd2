// Command salt-run runs master-side runner functions through the local
// master (salt/cli/run.py): jobs.lookup_jid, jobs.list_jobs,
// jobs.list_job, jobs.active, jobs.print_job, manage.status/up/down/
// present, manage.versions, cache.grains, cache.pillar, state.event, and
// the orchestration runners salt-master registers (state.orchestrate and
// its family, docs/ORCHESTRATION.md), whose return names its outputter
// and exit code.
package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/brinesalt/brine/internal/config"
	"github.com/brinesalt/brine/internal/eauthcli"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/internal/saltyaml"
	"github.com/brinesalt/brine/internal/shutdown"
	"github.com/brinesalt/brine/master"
	"github.com/brinesalt/brine/output"
	"github.com/brinesalt/brine/state/target"
)

func main() {
	ctx, stop := shutdown.Context(nil, "")
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("salt-run", pflag.ContinueOnError)
	fs.SetInterspersed(true)
	fs.SetOutput(stderr)
	confDir := fs.StringP("config-dir", "c", config.DefaultDir, "configuration directory")
	out := fs.String("out", "", "outputter")
	fs.StringP("log-level", "l", "warning", "console log level")
	ea := eauthcli.Register(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	rest := fs.Args()
	if len(rest) < 1 {
		fmt.Fprintln(stderr, "Usage: salt-run [options] <function> [arguments]")
		return 2
	}
	cfg, err := config.LoadMaster(*confDir, nil)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	mo, err := master.OptionsFromConfig(cfg)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	fun := rest[0]
	// salt/runner.py Runner.run reads the arguments through parse_input,
	// then load_args_and_kwargs: "limit=5" is the integer 5, a job id
	// stays its digits.
	pos, kw := saltyaml.SplitKwargs(saltyaml.ConditionedInput(rest[1:]))
	cl, err := master.Dial(ctx, mo.LocalSocket())
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	defer cl.Close()
	if fun == "state.event" {
		return stateEvent(ctx, cl, kw, stdout, stderr)
	}
	creds, err := ea.Resolve(ctx, cfg.Raw, &eauthcli.Terminal{Stdin: bufio.NewReader(stdin), Stdout: stdout, Stderr: stderr},
		func(ctx context.Context, c eauthcli.Creds) (string, error) {
			td, err := cl.MkToken(ctx, master.Creds(c), 0)
			if err != nil {
				return "", err
			}
			tok, _ := td.Value("token").(string)
			return tok, nil
		})
	if err != nil {
		// salt/runner.py logs "Authentication failed" and returns {}.
		fmt.Fprintln(stderr, "[ERROR   ] Authentication failed")
		return 0
	}
	ret, err := cl.Call(ctx, "runner", master.CallRequest{Fun: fun, Arg: pos, Kwarg: kw, Auth: master.Creds(creds)})
	var ae *master.AuthError
	if errors.As(err, &ae) {
		// salt/runner.py run shows the function's docs, or, without
		// any (Brine's runners have none), the error, and ends normally.
		ret, err = ae.Message, nil
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	name, ret := runnerOutput(*out, ret)
	if err := output.Write(stdout, name, ret, output.Options{}); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return runnerRetcode(ret)
}

// runnerOutput picks the outputter for a runner's return as
// RunnerClient.print_async_event does (salt/client/mixins.py): --out
// wins; a return of exactly {"data", "outputter"} prints its data with
// its outputter; any other return naming an "outputter" (state.orchestrate's
// {"data", "outputter", "retcode"}) is printed whole with it.
func runnerOutput(flag string, ret any) (string, any) {
	m, ok := ret.(*ordered.Map)
	name, _ := m.Value("outputter").(string)
	if !ok || name == "" {
		name = "nested"
	} else if m.Len() == 2 && m.Has("data") {
		ret = m.Value("data")
	}
	if flag != "" {
		name = flag
	}
	return name, ret
}

// runnerRetcode is salt/cli/run.py's exit status: a return mapping's
// "retcode" (the orchestrate runner's 0 or 1), else 0.
func runnerRetcode(ret any) int {
	m, ok := ret.(*ordered.Map)
	if !ok {
		return 0
	}
	if rc, ok := protocol.AsInt(m.Value("retcode")); ok {
		return rc
	}
	return 0
}

// stateEvent is salt/runners/state.py event: print events whose tag
// matches tagmatch (a glob, default "*") as "tag\tjson", the JSON
// indented by 4 with sorted keys when pretty; stop after count events
// (-1 for ever).
func stateEvent(ctx context.Context, cl *master.Client, kw *ordered.Map, stdout, stderr io.Writer) int {
	pretty := truthy(kw.Value("pretty"))
	tagmatch := "*"
	if s, ok := kw.Value("tagmatch").(string); ok && s != "" {
		tagmatch = s
	}
	// count=3 arrives as the integer parse_input makes of it.
	count := -1
	if n, ok := protocol.AsInt(kw.Value("count")); ok {
		count = n
	}
	m, err := target.Compile(tagmatch, target.Glob, target.Options{})
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	ch, err := cl.Events(ctx)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	for ev := range ch {
		if !m.Match(&target.Minion{ID: ev.Tag}) {
			continue
		}
		indent := -1
		if pretty {
			indent = 4
		}
		js, err := py.JSON(ev.Data, py.JSONOptions{Indent: indent, SortKeys: pretty})
		if err != nil {
			continue
		}
		fmt.Fprintf(stdout, "%s\t%s\n", ev.Tag, js)
		if f, ok := stdout.(interface{ Sync() error }); ok {
			_ = f.Sync()
		}
		if count > 0 {
			if count--; count == 0 {
				return 0
			}
		}
	}
	return 0
}

func truthy(v any) bool {
	switch x := v.(type) {
	case bool:
		return x
	case string:
		return strings.EqualFold(x, "true") || x == "1" || strings.EqualFold(x, "yes")
	}
	return false
}
