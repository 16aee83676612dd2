package sshexec

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/roster"
	"github.com/brinesalt/brine/sshexec/sshconn"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/thin/core"
	"github.com/brinesalt/brine/thin/frame"
)

// Conn is what the executor needs of an SSH connection; *sshconn.Conn
// provides it, and tests may substitute their own.
type Conn interface {
	Run(ctx context.Context, cmd string, stdin io.Reader, stdout, stderr io.Writer) (int, error)
	Upload(ctx context.Context, r io.Reader, remotePath string, mode os.FileMode, opts ...sshconn.UploadOption) error
	Close() error
}

// Dialer opens a connection to one roster target.
type Dialer func(ctx context.Context, t *roster.Target) (Conn, error)

// Job is one salt-ssh invocation: a function with arguments, or with Raw
// a shell command line run as is (salt-ssh -r).
type Job struct {
	JID   string
	Fun   string
	Arg   []any
	Kwarg *ordered.Map
	Raw   string
	// Pillar returns a host's pillar; nil means none. It runs on the
	// controller, so each host receives only its own.
	Pillar func(ctx context.Context, t *roster.Target) (*ordered.Map, error)
	// Data returns a function-specific payload for a host (a compiled
	// lowstate and its files); nil means none.
	Data func(ctx context.Context, t *roster.Target) (*ordered.Map, error)
	// RefreshGrains asks every host for its grains, fresh or not.
	RefreshGrains bool
	// preflightDone marks the inner runs of a planned job, which run the
	// pre-flight script once, in the first of them.
	preflightDone bool
	// full marks the inner runs of a planned job, which all use the full
	// thin: a planned function (state.*) needs it, so sending the core
	// first for its grains.items would only add an upload.
	full bool
	// relay is this run's relay, when Options.Relay is set.
	relay *relayRun

	// Plan, when set, decides on the controller what each host runs, as
	// Salt's salt-ssh wrapper functions do (state.* renders SLS files on
	// the master). It replaces Fun, Arg, Kwarg, Pillar and Data.
	Plan func(ctx context.Context, h *Host) (*Plan, error)
}

// Host is what a planner may use of one host while the executor holds
// its connection.
type Host struct {
	Target *roster.Target
	// Grains returns the host's grains: the cached ones when fresh, else
	// asked of the host.
	Grains func(ctx context.Context) (*ordered.Map, error)
	// Call runs an execution function on the host, returning its return
	// value and retcode.
	Call func(ctx context.Context, fun string, args []any, kwargs *ordered.Map) (any, int, error)
}

// Plan is what one host runs: a function with its payload, or, with
// Done, an answer the controller already has.
type Plan struct {
	Fun    string
	Arg    []any
	Kwarg  *ordered.Map
	Pillar *ordered.Map
	Data   *ordered.Map

	Done    bool
	Return  any
	Retcode int
	Out     string

	// Uploads are files the host needs in its content cache
	// (<thin_dir>/files/<sha256>), by sha256, with their local paths;
	// the executor sends those the host lacks before the run.
	Uploads map[string]string
	// Then, when set, turns the host's answer into the wrapper's own
	// (salt-ssh's cp.get_file answers True or False where the host's
	// cp.get_file names the file); it is not called on a failed run.
	Then func(ret any, retcode int) (any, int)
}

// Options configure an Executor.
type Options struct {
	// MaxProcs bounds how many hosts are worked on at once (Salt's
	// ssh_max_procs, default 25).
	MaxProcs int
	Dial     Dialer
	Bundle   *Bundle
	// FQDN is the controller's name used in the default thin_dir.
	FQDN string
	Wipe bool
	// Redeploy sends the thin binary even to hosts that have it
	// (salt-ssh -t/--regen-thin).
	Redeploy bool
	// Grains, when set, caches each host's grains: a host whose entry is
	// stale sends its grains back with the result.
	Grains *GrainsCache
	// PreFlightAlways runs a target's ssh_pre_flight script on every run,
	// not only when its thin_dir is missing (--pre-flight).
	PreFlightAlways bool
	// Relay, when set, moves large content-cache files through the
	// hosts themselves (salt-ssh --relay, docs/RELAY.md).
	Relay *RelayOptions
	Log   *slog.Logger
	// Started, when set, is called with a host's ID as work on it begins
	// (from that host's goroutine), so a progress display can tell the
	// hosts in flight, and the slowest of them, from those still queued.
	Started func(id string)
}

// Timings record where a host's time went, for salt-ssh -v.
type Timings struct {
	Connect, Upload, Run time.Duration
	Deployed             bool // the thin binary was sent in this run
	// Sent names the binaries sent (salt-thin-<ID> or salt-thin-core-<ID>)
	// and SentBytes counts the bytes uploaded for them.
	Sent      []string
	SentBytes int64
}

// Result is one host's answer, in the shape salt-ssh prints.
type Result struct {
	ID string
	// Return is what the outputter prints for the host: the function's
	// return, or for failures Salt's {stdout, stderr, retcode} map or a
	// plain "ssh: …" message.
	Return  any
	Retcode int
	// Out names an outputter the function asked for (e.g. "highstate").
	Out     string
	Timings Timings
	// Err is the transport or deploy failure, if any; Return already
	// describes it for the user.
	Err error
}

// Executor runs jobs over SSH.
type Executor struct{ opts Options }

// New returns an Executor; MaxProcs below 1 means Salt's default, 25.
func New(opts Options) *Executor {
	if opts.MaxProcs < 1 {
		opts.MaxProcs = 25
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	return &Executor{opts: opts}
}

// Run works on targets in a sliding window and sends each host's Result
// on the returned channel as soon as it is known. The channel closes when
// every host is done. Cancelling ctx stops hosts in flight; each still
// yields a Result saying why.
func (e *Executor) Run(ctx context.Context, targets []roster.Target, job Job) <-chan Result {
	out := make(chan Result)
	sem := make(chan struct{}, e.opts.MaxProcs)
	var wg sync.WaitGroup
	if e.opts.Relay != nil {
		rr, err := e.newRelayRun()
		if err != nil {
			e.opts.Log.Warn("relay off for this run", logattr.Err, err)
		}
		job.relay = rr
	}
	go func() {
		defer close(out)
		if job.relay != nil {
			defer job.relay.end()
		}
		for i := range targets {
			t := &targets[i]
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				out <- failure(t.ID, context.Cause(ctx), 1)
				continue
			}
			wg.Add(1)
			go func(t *roster.Target) {
				defer wg.Done()
				if e.opts.Started != nil {
					e.opts.Started(t.ID)
				}
				r := e.runHost(ctx, t, job)
				<-sem
				out <- r
			}(t)
		}
		wg.Wait()
	}()
	return out
}

func (e *Executor) runHost(ctx context.Context, t *roster.Target, job Job) Result {
	log := e.opts.Log.With(logattr.Host, t.ID)
	if t.SSHPreHook != "" {
		if r, failed := e.preHook(ctx, t); failed {
			return r
		}
	}
	var tm Timings
	start := time.Now()
	conn, err := e.opts.Dial(ctx, t)
	tm.Connect = time.Since(start)
	if err != nil {
		log.Debug("connect failed", logattr.Err, err)
		r := connectFailure(t, err)
		r.Timings = tm
		return r
	}
	defer job.relay.closeConn(conn)
	log.Debug("connected", logattr.Elapsed, tm.Connect)
	var r Result
	if job.Raw != "" {
		r = e.runRaw(ctx, conn, t, job)
	} else {
		r = e.runThin(ctx, conn, t, job, &tm)
	}
	r.Timings = tm
	log.Debug("done", "retcode", r.Retcode, logattr.Elapsed, time.Since(start))
	return r
}

// runRaw is salt-ssh -r: the command line runs in the login shell and the
// host's answer is {stdout, stderr, retcode} (Salt's "ssh._raw").
func (e *Executor) runRaw(ctx context.Context, conn Conn, t *roster.Target, job Job) Result {
	var stdout, stderr bytes.Buffer
	code, err := conn.Run(ctx, job.Raw, nil, &stdout, &stderr)
	if err != nil {
		return sessionFailure(t.ID, err, stdout.String(), stderr.String())
	}
	return Result{ID: t.ID, Retcode: code, Return: ordered.FromPairs(
		"stdout", stdout.String(), "stderr", stderr.String(), "retcode", code)}
}

func (e *Executor) runThin(ctx context.Context, conn Conn, t *roster.Target, job Job, tm *Timings) Result {
	if job.Plan != nil {
		return e.runPlanned(ctx, conn, t, job, tm)
	}
	p := e.scriptParams(t)
	p.Core = e.coreBin(job)
	if t.SSHPreFlight != "" && !job.preflightDone {
		if r, failed := e.preflight(ctx, conn, t, p, tm); failed {
			return r
		}
	}
	jobLine, err := e.payload(ctx, t, p.ThinDir, job)
	if err != nil {
		return failure(t.ID, err, 1)
	}
	payload := jobLine
	if p.Password {
		// sudo's password travels on stdin ahead of the job (thin/sudo.go).
		payload = append([]byte(t.Passwd.Reveal()+"\n"), payload...)
	}
	var r Result
	var stdout string
	var ok bool
	p.Wait = canWait(jobLine)
	if p.Wait {
		r, stdout, ok = e.attemptWaiting(ctx, conn, t.ID, p, payload, tm)
	} else {
		r, stdout, ok = e.attempt(ctx, conn, t.ID, p.probeScript(), payload, tm)
	}
	// A cold host asks for a binary; the core flavor may then ask for the
	// full thin (frame.NeedFullToken), so at most two are sent.
	for sent := 0; !ok && sent < 2 && r.Err == nil && r.Retcode == exitThinDeploy && strings.Contains(stdout, deployMarker); sent++ {
		upStart := time.Now()
		d, err := e.deploy(ctx, conn, t.ID, p, stdout, tm)
		tm.Upload += time.Since(upStart)
		if err != nil {
			return deployFailure(ctx, conn, t.ID, p, err)
		}
		tm.Deployed = true
		r, stdout, ok = e.attempt(ctx, conn, t.ID, d.script(), payload, tm)
	}
	if ok {
		return r
	}
	if p.Sudo && !p.TTY && errors.Is(r.Err, errRequireTTY) {
		// sudo is configured with requiretty: Salt tells the user to set
		// tty: True; Brine gives sudo a pty and tries once more.
		p.TTY, p.Wait = true, false
		if r2, _, ok := e.attempt(ctx, conn, t.ID, p.probeScript(), payload, tm); ok || r2.Err != nil {
			return r2
		}
	}
	return r
}

// runPlanned asks the planner what t runs, giving it the host's grains
// and a way to call functions there over the same connection, then runs
// the plan.
func (e *Executor) runPlanned(ctx context.Context, conn Conn, t *roster.Target, job Job, tm *Timings) Result {
	called := false // the thin binary is on the host after any call
	call := func(ctx context.Context, fun string, args []any, kwargs *ordered.Map, refresh bool) Result {
		called = true
		r := e.runThin(ctx, conn, t, Job{JID: job.JID, Fun: fun, Arg: args, Kwarg: kwargs, RefreshGrains: refresh, preflightDone: job.preflightDone, full: true}, tm)
		job.preflightDone = true
		return r
	}
	h := &Host{Target: t,
		Grains: func(ctx context.Context) (*ordered.Map, error) {
			if e.opts.Grains != nil {
				if g, fresh := e.opts.Grains.Get(t.ID); fresh && !job.RefreshGrains {
					return g, nil
				}
			}
			r := call(ctx, "grains.items", nil, nil, true)
			if r.Err != nil {
				return nil, r.Err
			}
			g, ok := r.Return.(*ordered.Map)
			if !ok || r.Retcode != 0 {
				return nil, fmt.Errorf("grains of %s: %v", t.ID, r.Return)
			}
			return g, nil
		},
		Call: func(ctx context.Context, fun string, args []any, kwargs *ordered.Map) (any, int, error) {
			r := call(ctx, fun, args, kwargs, false)
			return r.Return, r.Retcode, r.Err
		},
	}
	plan, err := job.Plan(ctx, h)
	if err != nil {
		return failure(t.ID, err, 1)
	}
	if plan.Done {
		return Result{ID: t.ID, Return: plan.Return, Retcode: plan.Retcode, Out: plan.Out}
	}
	if len(plan.Uploads) > 0 && job.relay != nil && !called {
		// The relay's agent is the thin binary: a planner that asked the
		// host nothing (cp.get_file, cached grains) has not deployed it.
		call(ctx, "test.true", nil, nil, false)
	}
	if len(plan.Uploads) > 0 {
		start := time.Now()
		err := e.fillCache(ctx, conn, t, plan.Uploads, job.relay)
		tm.Upload += time.Since(start)
		if err != nil {
			return failure(t.ID, err, 1)
		}
	}
	run := Job{JID: job.JID, Fun: plan.Fun, Arg: plan.Arg, Kwarg: plan.Kwarg,
		Pillar:        func(context.Context, *roster.Target) (*ordered.Map, error) { return plan.Pillar, nil },
		Data:          func(context.Context, *roster.Target) (*ordered.Map, error) { return plan.Data, nil },
		preflightDone: job.preflightDone, full: true}
	r := e.runThin(ctx, conn, t, run, tm)
	if r.Out == "" {
		r.Out = plan.Out
	}
	if plan.Then != nil && r.Err == nil {
		r.Return, r.Retcode = plan.Then(r.Return, r.Retcode)
	}
	return r
}

// attempt runs one script and returns the host's result; ok is false when
// the output held no result frame, in which case r describes the failure
// and stdout is kept for the deploy check.
func (e *Executor) attempt(ctx context.Context, conn Conn, id, script string, payload []byte, tm *Timings) (r Result, stdout string, ok bool) {
	start := time.Now()
	stdout, stderr, code, err := run(ctx, conn, script, payload)
	tm.Run += time.Since(start)
	return e.answer(id, stdout, stderr, code, err)
}

// answer reads what a session left: the host's result, or why there is
// none, with ok false and stdout kept for the deploy check.
func (e *Executor) answer(id, stdout, stderr string, code int, err error) (r Result, _ string, ok bool) {
	if err != nil {
		return sessionFailure(id, err, stdout, stderr), stdout, false
	}
	if res, ok := e.decodeFrame(id, stdout); ok {
		return res, stdout, true
	}
	if code == exitThinDeploy && strings.Contains(stdout, deployMarker) {
		return Result{ID: id, Retcode: code}, stdout, false
	}
	return shimFailure(id, stdout, stderr, code), stdout, false
}

// sentThin is a thin binary uploaded to a host, with what installing it
// takes.
type sentThin struct {
	p      scriptParams // p.Bin names the binary sent
	upload string
	codec  Codec
	sum    string
}

// script installs the upload and runs the job in a session of its own.
func (d sentThin) script() string { return d.p.installScript(d.upload, d.codec, d.sum) }

// cmd is script as the go-ahead command for a waiting probe.
func (d sentThin) cmd() string { return d.p.installCmd(d.upload, d.codec, d.sum) }

// deploy sends the thin binary for the architecture the host's deploy
// line reports: the core flavor when the job may run on it (p.Core) and
// the host has no full thin of this build, else the full thin.
func (e *Executor) deploy(ctx context.Context, conn Conn, id string, p scriptParams, probeOut string, tm *Timings) (sentThin, error) {
	line, err := parseDeployLine(probeOut)
	if err != nil {
		return sentThin{}, fmt.Errorf("deploy thin: %w", err)
	}
	arch, codec := line.arch, line.codec
	bundle := e.opts.Bundle
	if p.Core != "" && !line.hasFull && !line.needFull && bundle.Core.Has(arch) {
		bundle = bundle.Core
		p.Keep, p.Bin = p.Bin, p.Core
	}
	p.Core = ""
	path, sum, err := bundle.Payload(arch, codec)
	if err != nil {
		return sentThin{}, fmt.Errorf("deploy thin: %w", err)
	}
	raw, _, err := bundle.Payload(arch, CodecRaw)
	if err != nil {
		return sentThin{}, fmt.Errorf("deploy thin: %w", err)
	}
	if err := checkSpace(id, p, line, path, raw); err != nil {
		return sentThin{}, fmt.Errorf("deploy thin: %w", err)
	}
	f, err := os.Open(path)
	if err != nil {
		return sentThin{}, fmt.Errorf("deploy thin: %w", err)
	}
	defer f.Close()
	// The upload carries the binary's mode, which the decompressor keeps,
	// so no chmod runs on the host; its name has a dot, so no concurrent
	// install mistakes it for another build's binary.
	upload := fmt.Sprintf("%s.up-%d%s", p.Bin, time.Now().UnixNano(), codec.ext())
	// thin_dir is made, or set, by the upload with the mode Salt's shim
	// gives it; the install script's prelude then checks its owner.
	if err := conn.Upload(ctx, f, p.ThinDir+"/"+upload, p.binFileMode(), sshconn.WithDir(p.dirFileMode())); err != nil {
		return sentThin{}, fmt.Errorf("deploy thin: %w", explainUpload(id, p, line, path, raw, err))
	}
	tm.Sent = append(tm.Sent, p.Bin)
	if st, err := f.Stat(); err == nil {
		tm.SentBytes += st.Size()
	}
	e.opts.Log.Debug("thin sent", "thin_dir", p.ThinDir, "binary", p.Bin, "codec", string(codec), "bytes", tm.SentBytes)
	return sentThin{p: p, upload: upload, codec: codec, sum: sum}, nil
}

// deployLine is a host's deploy line (see deployMarker), parsed.
type deployLine struct {
	arch  string
	codec Codec
	// hasFull: the full thin of this build is on the host; needFull: the
	// binary that answered cannot serve this host, send the full thin.
	hasFull, needFull bool
	// freeKiB is the room left on thin_dir's file system, when the probe
	// could tell (hasFree).
	freeKiB int64
	hasFree bool
}

// parseDeployLine reads the deploy line in a host's output.
func parseDeployLine(out string) (deployLine, error) {
	d := deployLine{codec: CodecRaw}
	fields := strings.Fields(out[strings.Index(out, deployMarker)+len(deployMarker):])
	if len(fields) < 2 {
		return d, fmt.Errorf("malformed probe answer %q", out)
	}
	var err error
	if d.arch, err = Arch(fields[0], fields[1]); err != nil {
		return d, err
	}
	for _, f := range fields[2:] {
		switch {
		case f == hasFullToken:
			d.hasFull = true
		case f == frame.NeedFullToken:
			d.needFull = true
		case d.codec == CodecRaw && (Codec(f) == CodecZstd || Codec(f) == CodecGzip):
			d.codec = Codec(f)
		case !d.hasFree && strings.HasPrefix(f, freeToken):
			d.freeKiB, d.hasFree = parseFree(f)
		}
	}
	return d, nil
}

// coreBin is the core flavor's binary name on hosts when job may run on
// it, else empty: a function of the core modules (thin/core.Functions,
// computed from the registrations the core binary makes), not part of a
// planned job, with the core flavor built.
func (e *Executor) coreBin(job Job) string {
	if job.full || e.opts.Bundle.Core == nil || !core.Runs(modules.Default, job.Fun) {
		return ""
	}
	return e.opts.Bundle.Core.BinName()
}

func (e *Executor) scriptParams(t *roster.Target) scriptParams {
	dir := t.ThinDir
	if dir == "" {
		dir = roster.DefaultThinDir(t.User, e.opts.FQDN)
	}
	umask := -1
	if t.CmdUmask != nil {
		umask = *t.CmdUmask
	}
	return scriptParams{
		ThinDir: dir, Bin: e.opts.Bundle.BinName(), Sudo: t.Sudo, SudoUser: t.SudoUser,
		Wipe: e.opts.Wipe && !t.DisableWipe, Umask: umask, SetPath: t.SetPath, Force: e.opts.Redeploy,
		// Salt answers sudo's prompt with the login password (roster
		// passwd, --passwd); so does Brine, through thin sudo (sudo -S on a pipe).
		Password: t.Sudo && t.Passwd.IsSet(), TTY: t.TTY, LoginRoot: t.User == "root",
	}
}

// payload encodes the job for one host. The pillar is compiled here, for
// this host only, and travels on stdin: never in argv, never on disk.
func (e *Executor) payload(ctx context.Context, t *roster.Target, thinDir string, job Job) ([]byte, error) {
	fj := frame.Job{JID: job.JID, ID: t.ID, Fun: job.Fun, Arg: job.Arg, Kwarg: job.Kwarg,
		Grains: t.Grains, Opts: minionOpts(t, thinDir)}
	if fj.Arg == nil {
		fj.Arg = []any{}
	}
	var err error
	if job.Pillar != nil {
		if fj.Pillar, err = job.Pillar(ctx, t); err != nil {
			return nil, fmt.Errorf("compile pillar for %s: %w", t.ID, err)
		}
	}
	if job.Data != nil {
		if fj.Data, err = job.Data(ctx, t); err != nil {
			return nil, fmt.Errorf("prepare job for %s: %w", t.ID, err)
		}
	}
	// A stale cache entry is refreshed from a job that reads the grains
	// anyway; only a refresh (data-based targeting, --refresh, a planner)
	// makes the host gather them for the controller alone.
	if e.opts.Grains != nil {
		key := ""
		switch {
		case job.RefreshGrains:
			key = frame.ReturnGrains
		case !e.opts.Grains.Fresh(t.ID):
			key = frame.OfferGrains
		}
		if key != "" {
			if fj.Data == nil {
				fj.Data = ordered.New()
			}
			fj.Data.Set(key, true)
		}
	}
	b, err := json.Marshal(fj)
	// One line: a waiting probe drops it by lines (see canWait).
	return append(b, '\n'), err
}

// minionOpts is the minion configuration the thin binary runs with, as
// salt/client/ssh/__init__.py Single builds it: grains_cache on (so a warm
// host reads its grains instead of gathering them), then the roster's
// minion_opts, then the values salt-ssh forces: root_dir under thin_dir,
// and the id. The configuration lives in thin_dir, as Salt's shim writes
// <thin_dir>/minion and runs salt-call -c <thin_dir>
// (salt/client/ssh/ssh_py_shim.py), so the grains file grains.setval
// keeps is <thin_dir>/grains, not a co-installed minion's /etc/salt/grains.
func minionOpts(t *roster.Target, thinDir string) *ordered.Map {
	o := ordered.FromPairs("grains_cache", true)
	t.MinionOpts.Range(func(k, v any) bool { o.Set(k, v); return true })
	root := thinDir + "/running_data"
	o.Set("root_dir", root)
	if !t.MinionOpts.Has("cachedir") {
		o.Set("cachedir", root+"/var/cache/salt/minion")
	}
	if !t.MinionOpts.Has("conf_file") && !t.MinionOpts.Has("config_dir") {
		o.Set("conf_file", thinDir+"/minion")
		o.Set("config_dir", thinDir)
	}
	o.Set("id", t.ID)
	o.Set("thin_dir", thinDir)
	return o
}

func run(ctx context.Context, conn Conn, script string, stdin []byte) (stdout, stderr string, code int, err error) {
	var o, e bytes.Buffer
	code, err = conn.Run(ctx, script, bytes.NewReader(stdin), &o, &e)
	return o.String(), e.String(), code, err
}

func (e *Executor) decodeFrame(id, stdout string) (Result, bool) {
	res, err := frame.DecodeResult([]byte(stdout))
	if err != nil {
		return Result{}, false
	}
	if res.Grains != nil && e.opts.Grains != nil {
		if err := e.opts.Grains.Put(id, res.Grains); err != nil {
			e.opts.Log.Warn("cache grains", logattr.Host, id, logattr.Err, err)
		}
	}
	return Result{ID: id, Return: res.Return, Retcode: res.Retcode, Out: res.Out}, true
}

// deployFailure reports a failed upload and, as far as the connection
// still allows, leaves no partial files behind: uploads go to temporary
// names, which the next successful deploy or a --wipe clears.
func deployFailure(ctx context.Context, conn Conn, id string, p scriptParams, err error) Result {
	if p.Wipe {
		_, _ = conn.Run(ctx, wipeScript(p.ThinDir), nil, io.Discard, io.Discard)
	}
	return failure(id, err, 1)
}

// failure is a host result carrying only an error message.
func failure(id string, err error, code int) Result {
	return Result{ID: id, Return: err.Error(), Retcode: code, Err: err}
}

var errNoResult = errors.New("no result from thin binary")
