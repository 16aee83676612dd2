package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/config"
	"github.com/brinesalt/brine/internal/jid"
	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/logging"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/saltyaml"
	"github.com/brinesalt/brine/output"
	"github.com/brinesalt/brine/roster"
	"github.com/brinesalt/brine/sshexec"
	"github.com/brinesalt/brine/sshexec/sshconn"
	"github.com/brinesalt/brine/sshexec/wrapper"
	"github.com/brinesalt/brine/state/jinja"
	"github.com/brinesalt/brine/state/modules"
	_ "github.com/brinesalt/brine/state/modules/all" // functions templates may call
	"github.com/brinesalt/brine/state/states"
	_ "github.com/brinesalt/brine/state/states/all"
)

// app is one salt-ssh invocation, wired from config, roster and flags.
type app struct {
	o       *options
	cfg     *config.Master
	log     *slog.Logger
	stdout  io.Writer
	stderr  io.Writer
	outFile *os.File
	logFile *logging.FileHandler // the ssh_log_file, when open
	targets []roster.Target
	exec    *sshexec.Executor
	job     sshexec.Job
}

func newApp(ctx context.Context, o *options, stdin io.Reader, stdout, stderr io.Writer) (*app, error) {
	log, cfg, logFile, err := loadConfig(o, stderr)
	if err != nil {
		return nil, err
	}
	a := &app{o: o, cfg: cfg, log: log, logFile: logFile, stdout: stdout, stderr: stderr}
	if err := askPassword(o, ttyPassword); err != nil {
		a.close()
		return nil, err
	}
	if o.outFile != "" {
		if a.outFile, err = output.OpenFile(o.outFile, o.outAppend); err != nil {
			a.close()
			return nil, err
		}
		a.stdout = a.outFile
	}
	if a.targets, err = a.loadTargets(ctx); err != nil {
		a.close()
		return nil, err
	}
	if err := a.buildJob(); err != nil {
		a.close()
		return nil, err
	}
	if err := a.buildExecutor(); err != nil {
		a.close()
		return nil, err
	}
	return a, nil
}

func (a *app) close() {
	if a.outFile != nil {
		a.outFile.Close()
	}
	if a.logFile != nil {
		a.logFile.Close()
	}
}

// rosterOptions layers Salt's defaults, the master config and the flags
// the user gave (flags win) into what fills in roster entries.
func (a *app) rosterOptions() roster.Options {
	ro := roster.DefaultOptions(a.cfg.PKIDir)
	ro.User = a.cfg.SSHUser
	ro.Port = a.cfg.SSHPort
	ro.Sudo = a.cfg.SSHSudo
	ro.SudoUser = a.cfg.SSHSudoUser
	ro.IdentitiesOnly = a.cfg.SSHIdentitiesOnly
	a.connectionOptions(&ro)
	if s, ok := a.cfg.Raw.Value("ssh_priv").(string); ok && s != "" {
		ro.Priv = s
	}
	if a.o.set["user"] {
		ro.User = a.o.user
	}
	if a.o.set["priv"] {
		ro.Priv = a.o.priv
	}
	if a.o.sudo {
		ro.Sudo = true
	}
	if a.o.identOnly {
		ro.IdentitiesOnly = true
	}
	if a.o.timeout > 0 {
		ro.Timeout = time.Duration(a.o.timeout) * time.Second
	}
	ro.SSHOptions = append(ro.SSHOptions, a.o.sshOptions...)
	if a.o.passwd != "" {
		ro.Passwd = roster.Secret(a.o.passwd)
	}
	if a.o.privPasswd != "" {
		ro.PrivPasswd = roster.Secret(a.o.privPasswd)
	}
	if a.cfg.ThinDir != "" {
		ro.ThinDir = a.cfg.ThinDir // master thin_dir, below any roster thin_dir
	}
	if a.o.randThin {
		ro.ThinDir = filepath.Join("/var/tmp", "."+jid.RandomHex(3))
	}
	return ro
}

// connectionOptions sets the connect timeout and keepalive. Salt's
// ConnectTimeout is ssh_timeout plus the master's timeout (5): Brine
// computes it so when either is configured, else uses its own default
// (roster.DefaultConnectTimeout, which says why). ssh_keepalive,
// ssh_keepalive_interval and ssh_keepalive_count_max are Salt 3008's
// master options for ServerAliveInterval and ServerAliveCountMax.
func (a *app) connectionOptions(ro *roster.Options) {
	timeout, hasTimeout := a.cfg.Raw.Value("timeout").(int)
	if !hasTimeout {
		timeout = 5 // DEFAULT_MASTER_OPTS["timeout"]
	}
	if a.cfg.Raw.Value("ssh_timeout") != nil || hasTimeout {
		ro.Timeout = a.cfg.SSHTimeout + time.Duration(timeout)*time.Second
	}
	if b, ok := a.cfg.Raw.Value("ssh_keepalive").(bool); ok {
		ro.Keepalive = b
	}
	if n, ok := a.cfg.Raw.Value("ssh_keepalive_interval").(int); ok && n >= 0 {
		ro.KeepaliveInterval = n
	}
	if n, ok := a.cfg.Raw.Value("ssh_keepalive_count_max").(int); ok && n > 0 {
		ro.KeepaliveCountMax = n
	}
}

func (a *app) loadTargets(ctx context.Context) ([]roster.Target, error) {
	groups := map[string]any{}
	a.cfg.SSHListNodegroups.Range(func(k, v any) bool {
		groups[ordered.KeyString(k)] = v
		return true
	})
	rc := roster.Config{
		File:           a.o.rosterFile,
		ConfigDir:      a.o.configDir,
		Render:         roster.JinjaRender(jinja.Options{Vars: map[string]any{"opts": a.cfg.Raw}}),
		RosterDefaults: a.cfg.RosterDefaults,
		Options:        a.rosterOptions(),
		ListNodegroups: groups,
		Logger:         a.log,
	}
	if rc.File == "" {
		if s, ok := a.cfg.Raw.Value("roster_file").(string); ok {
			rc.File = s
		}
	}
	if err := rosterExtras(&rc, a.cfg, a.o); err != nil {
		return nil, err
	}
	r, err := roster.Open(ctx, a.o.roster, rc)
	if err != nil {
		return nil, err
	}
	tgt, kind := a.rosterQuery()
	return r.Targets(ctx, tgt, kind)
}

func (a *app) buildJob() error {
	a.job.JID = a.o.jid
	if a.job.JID == "" {
		a.job.JID = jid.New(time.Now())
	}
	if a.o.raw {
		a.job.Raw = a.o.rawCommand()
		return nil
	}
	a.job.Fun = a.o.fun
	a.job.Arg, a.job.Kwarg = saltyaml.ParseInput(a.o.args)
	if a.job.Fun == wrapper.BootstrapFun {
		a.job.Plan = (&wrapper.Bootstrap{Connect: func() (*wrapper.MasterLink, error) { return masterLink(a.cfg) }, Log: a.log}).Plan(a.job.Arg, a.job.Kwarg)
		return nil
	}
	switch {
	case wrapper.IsState(a.job.Fun):
		a.job.Plan = a.stateWrapper().Plan(a.job.Fun, a.job.Arg, a.job.Kwarg)
		a.job.RefreshGrains = a.o.refresh
	case wrapper.IsPillar(a.job.Fun):
		// The host's pillar is compiled here, as for its states; it
		// answers on the controller, as Salt's pillar wrapper does.
		a.job.Plan = a.stateWrapper().PlanPillar(a.job.Fun, a.job.Arg, a.job.Kwarg)
		a.job.RefreshGrains = a.o.refresh
	}
	return nil
}

// stateWrapper renders states on the controller from the master's
// file_roots and pillar_roots (Salt's defaults when unset).
func (a *app) stateWrapper() *wrapper.States {
	opts := a.cfg.Raw.Copy()
	for key, roots := range map[string]map[string][]string{"file_roots": a.cfg.FileRoots, "pillar_roots": a.cfg.PillarRoots} {
		if opts.Has(key) {
			continue // as written, in the config's saltenv order
		}
		m := ordered.New()
		for env, dirs := range roots {
			l := make([]any, len(dirs))
			for i, d := range dirs {
				l[i] = d
			}
			m.Set(env, l)
		}
		opts.Set(key, m)
	}
	return &wrapper.States{Opts: opts, States: states.Default, Funcs: modules.Default, Log: a.log}
}

func (a *app) buildExecutor() error {
	// Data-based targeting asks hosts for grains through the thin binary,
	// even for a raw command.
	needThin := !a.o.raw || needsData(a.o.tgtType)
	var bundle *sshexec.Bundle
	if needThin {
		var err error
		if bundle, err = sshexec.OpenBundle(thinSearchDir(), filepath.Join(a.cfg.CacheDir, "thin")); err != nil {
			return err
		}
	}
	mode := sshconn.HostKeyStrict
	switch {
	case a.o.noHostKeys:
		mode = sshconn.HostKeyIgnore
	case a.o.ignoreKeys:
		mode = sshconn.HostKeyAcceptNew
	}
	defaultKey := roster.DefaultOptions(a.cfg.PKIDir).Priv
	for _, t := range a.targets {
		if t.Priv == defaultKey {
			if _, err := sshconn.EnsureKey(a.cfg.PKIDir); err != nil {
				return fmt.Errorf("create salt-ssh key: %w", err)
			}
			break
		}
	}
	maxProcs := a.cfg.SSHMaxProcs
	if a.o.set["max-procs"] {
		maxProcs = a.o.maxProcs
	}
	d, err := newDialer(a, mode)
	if err != nil {
		return err
	}
	a.exec = sshexec.New(sshexec.Options{
		MaxProcs: maxProcs, Dial: d.dial, Bundle: bundle, FQDN: sshexec.FQDN(),
		Wipe: a.o.wipe, Redeploy: a.o.regenThin, Log: a.log, Grains: a.grainsCache(),
		PreFlightAlways: a.o.preFlight || a.cfg.SSHRunPreFlight,
	})
	return nil
}

// thinSearchDir is where the thin binaries live: $BRINE_THIN_DIR, else
// beside the salt-ssh executable.
func thinSearchDir() string {
	if d := os.Getenv("BRINE_THIN_DIR"); d != "" {
		return d
	}
	exe, err := os.Executable()
	if err != nil {
		return "."
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	return filepath.Dir(exe)
}

// run executes the job on every target, printing each host's result as
// it arrives (or all at once with --static), and returns Salt's exit
// code: 0, or 20 (EX_AGGREGATE) when any host failed.
func (a *app) run(ctx context.Context) int {
	if needsData(a.o.tgtType) {
		if err := a.selectByData(ctx); err != nil {
			fmt.Fprintf(a.stderr, "salt-ssh: error: %v\n", err)
			return 1
		}
	}
	if len(a.targets) == 0 {
		// salt/client/ssh/__init__.py handle_ssh logs this and exits 0.
		a.log.Error("No matching targets found in roster.")
		return 0
	}
	if a.o.verbose {
		msg := "Executing job with jid " + a.job.JID
		fmt.Fprintf(a.stdout, "%s\n%s\n\n\n", msg, strings.Repeat("-", len(msg)))
	}
	p := &output.Printer{W: a.stdout, Out: a.outputter(), Static: a.o.static,
		Opts: output.Options{Color: a.color(), Logger: a.log,
			Highstate: output.ParseHighstateOptions(a.cfg.Raw, a.o.stateOut, a.o.stateVerb)}}
	if a.o.outIndent >= 0 {
		p.Opts.Indent = output.IndentOf(a.o.outIndent)
	}
	final := 0
	bar := a.progress()
	rec := a.startJob(ctx)
	defer rec.close()
	for r := range a.exec.Run(ctx, a.targets, a.job) {
		rec.add(ctx, r)
		final = max(final, r.Retcode)
		show := func() {
			if a.o.verbose {
				a.printTimings(r)
			}
			if err := p.Host(r.ID, hostReturn(r)); err != nil {
				a.log.Error("print output", logattr.Err, err)
			}
		}
		if bar == nil {
			show()
			continue
		}
		bar.host(r.Retcode != 0, show)
	}
	if bar != nil {
		bar.close()
	}
	if err := p.Flush(); err != nil {
		a.log.Error("print output", logattr.Err, err)
	}
	if final != 0 {
		return 20
	}
	return 0
}

// hostReturn is the per-host data salt-ssh hands its display code: the
// remote salt-call's {return, retcode, out} for a run that produced a
// result, or the failure as the executor described it.
func hostReturn(r sshexec.Result) any {
	if r.Err != nil {
		return r.Return
	}
	m := ordered.FromPairs("return", r.Return, "retcode", r.Retcode)
	if r.Out != "" {
		m.Set("out", r.Out)
	}
	return m
}

// progress returns a live status line for runs over several hosts when
// stderr is a terminal and the output is meant for people, else nil.
func (a *app) progress() *progress {
	f, ok := a.stderr.(*os.File)
	if !ok || !isTerminal(f) || len(a.targets) < 2 || a.o.static {
		return nil
	}
	switch a.outputter() {
	case "json", "yaml", "raw", "quiet":
		return nil
	}
	return newProgress(a.stderr, len(a.targets))
}

func (a *app) outputter() string {
	if a.o.out != "" {
		return a.o.out
	}
	if s, ok := a.cfg.Raw.Value("output").(string); ok {
		return s
	}
	return ""
}

// color follows Salt: --force-color, else --no-color, else the config's
// color, else on when stdout is a terminal.
func (a *app) color() bool {
	return output.UseColor(a.stdout, a.o.noColor, a.o.forceCol, a.cfg.Raw.Value("color"))
}

func (a *app) printTimings(r sshexec.Result) {
	t := r.Timings
	sent := ""
	if t.Deployed {
		sent = fmt.Sprintf(" (thin sent: %s, %d bytes)", strings.Join(t.Sent, " "), t.SentBytes)
	}
	fmt.Fprintf(a.stderr, "%s: connect %s, upload %s, run %s%s, retcode %d\n", r.ID,
		t.Connect.Round(time.Millisecond), t.Upload.Round(time.Millisecond), t.Run.Round(time.Millisecond),
		sent, r.Retcode)
}
