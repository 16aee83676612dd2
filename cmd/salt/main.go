// Command salt publishes a job to the minions through the local master
// and prints their returns (salt/cli/salt.py, salt/client LocalClient):
// targeting options, batches, --async, and Salt's find_job check so that
// long-running jobs are not reported missing.
package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/brinesalt/brine/internal/config"
	"github.com/brinesalt/brine/internal/eauthcli"
	"github.com/brinesalt/brine/internal/logging"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/saltyaml"
	"github.com/brinesalt/brine/internal/shutdown"
	"github.com/brinesalt/brine/internal/targetopt"
	"github.com/brinesalt/brine/master"
	"github.com/brinesalt/brine/output"
)

func main() {
	ctx, stop := shutdown.Context(nil, "")
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// options are salt's command-line options (salt/utils/parsers.py
// SaltCMDOptionParser) that Brine implements.
type options struct {
	target                                   *targetopt.Options
	eauth                                    *eauthcli.Options
	batch                                    string
	batchWait                                float64
	async, verbose, showJID                  bool
	timeout, gatherJobTimeout                int
	out, configDir, logLevel, delimiter, ret string
	outIndent                                int
	noColor, forceColor                      bool
	progress                                 bool
	subset                                   int
	retConfig, retKwargs                     string
	// Output options (salt/utils/parsers.py OutputOptionsMixIn and
	// SaltCMDOptionParser).
	static, hideTimeout, failhard, summary, outAppend, outputDiff bool
	outFile, stateOut, stateVerbose                               string
}

func newFlagSet(o *options, stderr io.Writer) *pflag.FlagSet {
	fs := pflag.NewFlagSet("salt", pflag.ContinueOnError)
	fs.SetInterspersed(true)
	fs.SetOutput(stderr)
	o.target = targetopt.Register(fs, targetopt.Extended, nil)
	o.eauth = eauthcli.Register(fs)
	fs.StringVarP(&o.batch, "batch-size", "b", "", "run in batches of N minions or N% of them")
	fs.StringVar(&o.batch, "batch", "", "alias of --batch-size")
	fs.Float64Var(&o.batchWait, "batch-wait", 0, "seconds to wait after a minion returns before starting the next")
	fs.BoolVar(&o.async, "async", false, "publish and print the job id without waiting")
	fs.BoolVarP(&o.verbose, "verbose", "v", false, "show the jid and list minions that did not return")
	fs.BoolVar(&o.showJID, "show-jid", false, "print the jid")
	fs.IntVarP(&o.timeout, "timeout", "t", 0, "seconds to wait for returns after the last activity")
	fs.IntVar(&o.gatherJobTimeout, "gather-job-timeout", 0, "seconds to wait for saltutil.find_job answers")
	fs.StringVar(&o.out, "out", "", "outputter (nested, json, yaml, txt, raw, ...)")
	fs.StringVar(&o.out, "output", "", "alias of --out")
	fs.IntVar(&o.outIndent, "out-indent", -1000, "indent for json/yaml output")
	fs.IntVar(&o.outIndent, "output-indent", -1000, "alias of --out-indent")
	fs.StringVar(&o.outFile, "out-file", "", "write the output to this file")
	fs.StringVar(&o.outFile, "output-file", "", "alias of --out-file")
	fs.BoolVar(&o.outAppend, "out-file-append", false, "append to --out-file instead of emptying it")
	fs.BoolVar(&o.outAppend, "output-file-append", false, "alias of --out-file-append")
	fs.StringVar(&o.stateOut, "state-output", "", "highstate output mode: full, terse, mixed, changes or filter")
	fs.StringVar(&o.stateOut, "state_output", "", "alias of --state-output")
	fs.StringVar(&o.stateVerbose, "state-verbose", "", "True or False: show states that did not change")
	fs.StringVar(&o.stateVerbose, "state_verbose", "", "alias of --state-verbose")
	fs.BoolVarP(&o.static, "static", "s", false, "print the returns of all minions as one document once they all returned")
	fs.BoolVar(&o.hideTimeout, "hide-timeout", false, "do not show minions that did not return")
	fs.BoolVar(&o.failhard, "failhard", false, "stop a batch run at the first minion that returns a non-zero retcode")
	fs.BoolVar(&o.summary, "summary", false, "print a summary of the returns")
	fs.BoolVar(&o.outputDiff, "output-diff", false, "show only the states that changed or did not succeed")
	fs.BoolVar(&o.noColor, "no-color", false, "no colours")
	fs.BoolVar(&o.noColor, "no-colour", false, "alias of --no-color")
	fs.BoolVar(&o.forceColor, "force-color", false, "colours even when stdout is not a terminal")
	fs.BoolVar(&o.forceColor, "force-colour", false, "alias of --force-color")
	fs.StringVarP(&o.configDir, "config-dir", "c", config.DefaultDir, "configuration directory")
	fs.StringVarP(&o.logLevel, "log-level", "l", "warning", "console log level")
	fs.StringVar(&o.delimiter, "delimiter", "", "grain/pillar key delimiter")
	fs.StringVar(&o.ret, "return", "", "returners to send the returns to as well")
	fs.StringVar(&o.retConfig, "return_config", "", "alternative returner configuration name")
	fs.StringVar(&o.retKwargs, "return_kwargs", "", "returner options as a YAML dict")
	fs.BoolVarP(&o.progress, "progress", "p", false, "show a progress bar on stderr as returns arrive")
	fs.IntVar(&o.subset, "subset", 0, "run on N random minions of the target that have the function")
	return fs
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	var o options
	fs := newFlagSet(&o, stderr)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	rest := fs.Args()
	if len(rest) < 2 {
		fmt.Fprintln(stderr, "Usage: salt [options] '<target>' <function> [arguments]")
		return 2
	}
	tgtType, err := o.target.Type()
	if err != nil {
		fmt.Fprintf(stderr, "salt: error: %v\n", err)
		return 2
	}
	log, err := logging.New(stderr, o.logLevel)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	cfg, err := config.LoadMaster(o.configDir, nil)
	if err != nil {
		log.Error(err.Error())
		return 1
	}
	mo, err := master.OptionsFromConfig(cfg)
	if err != nil {
		log.Error(err.Error())
		return 1
	}
	if o.timeout > 0 {
		mo.Timeout = time.Duration(o.timeout) * time.Second
	}
	if o.gatherJobTimeout > 0 {
		mo.GatherJobTimeout = time.Duration(o.gatherJobTimeout) * time.Second
	}
	tgt := targetopt.Target(rest[0], tgtType)
	// Salt's parser runs the arguments through parse_input before
	// publishing (salt/utils/parsers.py SaltCMDOptionParser): test=True
	// goes as {"__kwarg__": True, "test": True}, not as a string.
	jobArgs := saltyaml.ConditionedInput(rest[2:])
	c := &cli{o: o, mo: mo, cfg: cfg.Raw, log: log, fun: rest[1], stdout: stdout, outW: stdout, stderr: stderr, sock: mo.LocalSocket()}
	if o.outFile != "" {
		f, err := output.OpenFile(o.outFile, o.outAppend)
		if err != nil {
			// Salt's parser rejects an unwritable --out-file (exit 2).
			fmt.Fprintf(stderr, "salt: error: %v\n", err)
			return 2
		}
		defer f.Close()
		c.outW = f
	}
	req := master.PublishRequest{Tgt: tgt, TgtType: tgtType, Fun: rest[1], Arg: jobArgs, Ret: o.ret, User: master.LocalUser(),
		Delimiter: o.delimiter, RetConfig: o.retConfig}
	if o.retKwargs != "" {
		// salt/cli/salt.py passes --return_kwargs through yamlify_arg;
		// the returners update their options with it, so it must be a
		// dict.
		kw, ok := saltyaml.ParseCLIArg(o.retKwargs).(*ordered.Map)
		if !ok {
			fmt.Fprintf(stderr, "salt: error: --return_kwargs %q is not a YAML dict\n", o.retKwargs)
			return 2
		}
		req.RetKwargs = kw
	}
	creds, err := o.eauth.Resolve(ctx, cfg.Raw, &eauthcli.Terminal{Stdin: bufio.NewReader(stdin), Stdout: stdout, Stderr: stderr},
		func(ctx context.Context, cr eauthcli.Creds) (string, error) { return makeToken(ctx, c.sock, cr) })
	if err != nil {
		// salt/cli/salt.py: "ERROR: Authentication failed", exit 2.
		fmt.Fprintln(stderr, "ERROR: Authentication failed")
		if !errors.Is(err, eauthcli.ErrAuthFailed) {
			fmt.Fprintln(stderr, err)
		}
		return 2
	}
	req.Auth = master.Creds(creds)
	if o.batch != "" || o.static {
		// salt/cli/salt.py runs --static as a quiet batch of 100%.
		return c.runBatch(ctx, req)
	}
	return c.runOnce(ctx, req)
}

// makeToken asks the master for an eauth token (Resolver.token_cli).
func makeToken(ctx context.Context, sock string, c eauthcli.Creds) (string, error) {
	cl, err := master.Dial(ctx, sock)
	if err != nil {
		return "", err
	}
	defer cl.Close()
	td, err := cl.MkToken(ctx, master.Creds(c), 0)
	if err != nil {
		return "", err
	}
	tok, _ := td.Value("token").(string)
	return tok, nil
}
