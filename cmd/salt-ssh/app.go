package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/config"
	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/logging"
	"github.com/brinesalt/brine/internal/saltyaml"
	"github.com/brinesalt/brine/output"
	"github.com/brinesalt/brine/sshexec"
	"github.com/brinesalt/brine/sshexec/sshrun"
	"github.com/brinesalt/brine/sshexec/wrapper"
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
	sr      *sshrun.Run
	// bar is the status line, when there is one; it is set before the
	// run starts and only read by hostStarted afterwards.
	bar *progress
}

// hostStarted tells the status line that work on a host began.
func (a *app) hostStarted(id string) {
	if a.bar != nil {
		a.bar.hostStarted(id)
	}
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
	s := o.settings(cfg)
	s.Started = a.hostStarted
	if a.sr, err = sshrun.New(ctx, cfg, s, log); err != nil {
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

// settings are the run's choices from the flags, for sshrun.
func (o *options) settings(cfg *config.Master) sshrun.Settings {
	s := sshrun.Settings{ConfigDir: o.configDir, Raw: o.raw, Roster: o.roster, RosterFile: o.rosterFile,
		Refresh: o.refresh, MaxProcs: o.maxProcs, Wipe: o.wipe, RandThin: o.randThin, RegenThin: o.regenThin, Relay: o.relay,
		PreFlight: o.preFlight, SSHOptions: o.sshOptions, Priv: o.priv, IgnoreHostKeys: o.ignoreKeys,
		NoHostKeys: o.noHostKeys, User: o.user, IdentitiesOnly: o.identOnly, Sudo: o.sudo, Timeout: o.timeout,
		JID: o.jid, ScanPorts: o.scanPorts, ScanTimeout: o.scanTimeout, UpdateRoster: o.updateRoster,
		RemotePortForwards: o.remoteFwds, Passwd: o.passwd, PrivPasswd: o.privPasswd, KeyDeploy: o.keyDeploy,
		Target: o.target, TgtType: o.tgtType, Fun: o.fun, Set: o.set,
		MasterLink: func() (*wrapper.MasterLink, error) { return masterLink(cfg) }}
	// The job cache records the command line after the function as typed.
	s.JobArgs = make([]any, len(o.args))
	for i, a := range o.args {
		s.JobArgs[i] = a
	}
	if o.raw {
		s.RawCommand = o.rawCommand()
	} else {
		s.Arg, s.Kwarg = saltyaml.ParseInput(o.args)
	}
	return s
}

// run executes the job on every target, printing each host's result as
// it arrives (or all at once with --static), and returns Salt's exit
// code: 0, or 20 (EX_AGGREGATE) when any host failed.
func (a *app) run(ctx context.Context) int {
	if err := a.sr.Select(ctx); err != nil {
		fmt.Fprintf(a.stderr, "salt-ssh: error: %v\n", err)
		return 1
	}
	if len(a.sr.Targets()) == 0 {
		// salt/client/ssh/__init__.py handle_ssh logs this and exits 0.
		a.log.Error("No matching targets found in roster.")
		return 0
	}
	if a.o.verbose {
		msg := "Executing job with jid " + a.sr.JID()
		fmt.Fprintf(a.stdout, "%s\n%s\n\n\n", msg, strings.Repeat("-", len(msg)))
	}
	p := &output.Printer{W: a.stdout, Out: a.outputter(), Static: a.o.static,
		Opts: output.Options{Color: a.color(), Logger: a.log,
			Highstate: output.ParseHighstateOptions(a.cfg.Raw, a.o.stateOut, a.o.stateVerb)}}
	if a.o.outIndent >= 0 {
		p.Opts.Indent = output.IndentOf(a.o.outIndent)
	}
	show := func(r sshexec.Result) {
		if a.o.verbose {
			a.printTimings(r)
		}
		if err := p.Host(r.ID, sshrun.HostReturn(r)); err != nil {
			a.log.Error("print output", logattr.Err, err)
		}
	}
	var sum *summary
	if a.o.summary {
		sum = &summary{}
	}
	final := 0
	a.bar = a.progress()
	for r := range a.sr.Results(ctx) {
		final = max(final, r.Retcode)
		print := func() { show(r) }
		if sum != nil {
			sum.add(r)
			print = func() {}
		}
		if a.bar == nil {
			print()
			continue
		}
		a.bar.host(r.ID, r.Retcode != 0, print)
	}
	if a.bar != nil {
		a.bar.close()
	}
	if sum != nil {
		w := a.stdout
		if a.o.out != "" {
			w = a.stderr
		}
		if err := sum.print(w, show); err != nil {
			a.log.Error("print summary", logattr.Err, err)
		}
	}
	if err := p.Flush(); err != nil {
		a.log.Error("print output", logattr.Err, err)
	}
	if final != 0 {
		return 20
	}
	return 0
}

// progress returns a live status line for runs over several hosts when
// stderr is a terminal and the output is meant for people, else nil.
func (a *app) progress() *progress {
	f, ok := a.stderr.(*os.File)
	if !ok || !isTerminal(f) || len(a.sr.Targets()) < 2 || a.o.static {
		return nil
	}
	switch a.outputter() {
	case "json", "yaml", "raw", "quiet":
		return nil
	}
	return newProgress(a.stderr, len(a.sr.Targets()))
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
