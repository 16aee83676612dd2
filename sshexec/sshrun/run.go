// Package sshrun is one salt-ssh run (salt/client/ssh/__init__.py SSH):
// the roster's targets, the job, and the executor wired from the master
// config and the run's settings, with data-based targeting and the job
// cache record. The salt-ssh command and salt-api's ssh client both
// drive it; what they print is theirs.
package sshrun

import (
	"context"
	"log/slog"

	"github.com/brinesalt/brine/internal/config"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/roster"
	"github.com/brinesalt/brine/sshexec"
	"github.com/brinesalt/brine/sshexec/wrapper"
	_ "github.com/brinesalt/brine/state/modules/allmodules" // functions templates may call
	_ "github.com/brinesalt/brine/state/states/allstates"
)

// Settings are a run's choices beyond the master config: salt-ssh's
// command-line options, or the kwargs salt-api's ssh client allows.
type Settings struct {
	// ConfigDir is the master's configuration directory (the roster's
	// default place).
	ConfigDir string
	// Raw runs RawCommand through the remote shell instead of Fun.
	Raw        bool
	RawCommand string
	// Roster is the backends (flat, ansible, ...), RosterFile the file.
	Roster, RosterFile string
	// Refresh asks the hosts for fresh grains.
	Refresh  bool
	MaxProcs int
	// Wipe, RandThin, RegenThin and PreFlight are -w, -W, -t and
	// --pre-flight.
	Wipe, RandThin, RegenThin, PreFlight bool
	// Relay is --relay (or the master's ssh_relay): see docs/RELAY.md.
	Relay                      bool
	SSHOptions                 []string
	Priv                       string
	IgnoreHostKeys, NoHostKeys bool
	User                       string
	IdentitiesOnly, Sudo       bool
	// Timeout is the connect timeout in seconds (0: from the config).
	Timeout int
	JID     string
	// The scan and flat rosters' options (--scan-ports, --scan-timeout,
	// --update-roster) and --remote-port-forwards.
	ScanPorts          string
	ScanTimeout        float64
	UpdateRoster       bool
	RemotePortForwards string
	// Passwd is the default SSH (and sudo) password, PrivPasswd the
	// key's passphrase.
	Passwd, PrivPasswd string
	// KeyDeploy installs the salt-ssh key on hosts reached by password.
	KeyDeploy bool
	// Target and TgtType choose the hosts; Fun, Arg and Kwarg the job.
	Target, TgtType, Fun string
	Arg                  []any
	Kwarg                *ordered.Map
	// JobArgs are the arguments the job cache records.
	JobArgs []any
	// Caller is the user the job cache records ("": the local user).
	Caller string
	// Set names the settings given explicitly (salt-ssh's flag names:
	// "user", "priv", "max-procs", "roster", "scan-ports",
	// "scan-timeout", "update-roster", "remote-port-forwards"), which win
	// over the master config.
	Set map[string]bool
	// MasterLink connects minion.bootstrap to the master; nil leaves
	// minion.bootstrap without one.
	MasterLink func() (*wrapper.MasterLink, error)
	// Started, when set, is told each host's ID as work on it begins
	// (sshexec.Options.Started).
	Started func(id string)
}

// Run is a prepared salt-ssh run.
type Run struct {
	s       Settings
	cfg     *config.Master
	log     *slog.Logger
	targets []roster.Target
	exec    *sshexec.Executor
	job     sshexec.Job
}

// New prepares a run: the roster's targets for the expression, the job
// and the executor.
func New(ctx context.Context, cfg *config.Master, s Settings, log *slog.Logger) (*Run, error) {
	if s.Set == nil {
		s.Set = map[string]bool{}
	}
	if s.RandThin {
		s.Wipe = true
	}
	sr := &Run{s: s, cfg: cfg, log: log}
	var err error
	if sr.targets, err = sr.loadTargets(ctx); err != nil {
		return nil, err
	}
	if err := sr.buildJob(); err != nil {
		return nil, err
	}
	if err := sr.buildExecutor(); err != nil {
		return nil, err
	}
	return sr, nil
}

// Targets are the hosts the run will reach (after Select, the ones the
// data matched).
func (sr *Run) Targets() []roster.Target { return sr.targets }

// JID is the run's job id.
func (sr *Run) JID() string { return sr.job.JID }

// Job is what runs on every host.
func (sr *Run) Job() sshexec.Job { return sr.job }

// Select narrows the targets by grains and pillar for data-based
// expressions (grain, pillar, ipcidr, compound); others are left as the
// roster gave them.
func (sr *Run) Select(ctx context.Context) error {
	if !needsData(sr.s.TgtType) {
		return nil
	}
	return sr.selectByData(ctx)
}

// Results runs the job on every target and hands on each host's result
// as it finishes, recording each in the master's job cache.
func (sr *Run) Results(ctx context.Context) <-chan sshexec.Result {
	rec := sr.startJob(ctx)
	out := make(chan sshexec.Result)
	go func() {
		defer close(out)
		defer rec.close() // flushes what a database job cache buffered, before the caller sees the end
		for r := range sr.exec.Run(ctx, sr.targets, sr.job) {
			rec.add(ctx, r)
			out <- r
		}
	}()
	return out
}

// HostReturn is the per-host data salt-ssh hands its display code: the
// remote salt-call's {return, retcode, out} for a run that produced a
// result, or the failure as the executor described it.
func HostReturn(r sshexec.Result) any {
	if r.Err != nil {
		return r.Return
	}
	m := ordered.FromPairs("return", r.Return, "retcode", r.Retcode)
	if r.Out != "" {
		m.Set("out", r.Out)
	}
	return m
}
