package sshrun

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/brinesalt/brine/internal/jid"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/roster"
	"github.com/brinesalt/brine/sshexec"
	"github.com/brinesalt/brine/sshexec/sshconn"
	"github.com/brinesalt/brine/sshexec/wrapper"
	"github.com/brinesalt/brine/state/jinja"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/states"
)

// rosterOptions layers Salt's defaults, the master config and the flags
// the user gave (flags win) into what fills in roster entries.
func (sr *Run) rosterOptions() roster.Options {
	ro := roster.DefaultOptions(sr.cfg.PKIDir)
	ro.User = sr.cfg.SSHUser
	ro.Port = sr.cfg.SSHPort
	ro.Sudo = sr.cfg.SSHSudo
	ro.SudoUser = sr.cfg.SSHSudoUser
	ro.IdentitiesOnly = sr.cfg.SSHIdentitiesOnly
	sr.connectionOptions(&ro)
	if s, ok := sr.cfg.Raw.Value("ssh_priv").(string); ok && s != "" {
		ro.Priv = s
	}
	if sr.s.Set["user"] {
		ro.User = sr.s.User
	}
	if sr.s.Set["priv"] {
		ro.Priv = sr.s.Priv
	}
	if sr.s.Sudo {
		ro.Sudo = true
	}
	if sr.s.IdentitiesOnly {
		ro.IdentitiesOnly = true
	}
	if sr.s.Timeout > 0 {
		ro.Timeout = time.Duration(sr.s.Timeout) * time.Second
	}
	ro.SSHOptions = append(ro.SSHOptions, sr.s.SSHOptions...)
	if sr.s.Passwd != "" {
		ro.Passwd = roster.Secret(sr.s.Passwd)
	}
	if sr.s.PrivPasswd != "" {
		ro.PrivPasswd = roster.Secret(sr.s.PrivPasswd)
	}
	if sr.cfg.ThinDir != "" {
		ro.ThinDir = sr.cfg.ThinDir // master thin_dir, below any roster thin_dir
	}
	if sr.s.RandThin {
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
func (sr *Run) connectionOptions(ro *roster.Options) {
	timeout, hasTimeout := sr.cfg.Raw.Value("timeout").(int)
	if !hasTimeout {
		timeout = 5 // DEFAULT_MASTER_OPTS["timeout"]
	}
	if sr.cfg.Raw.Value("ssh_timeout") != nil || hasTimeout {
		ro.Timeout = sr.cfg.SSHTimeout + time.Duration(timeout)*time.Second
	}
	if b, ok := sr.cfg.Raw.Value("ssh_keepalive").(bool); ok {
		ro.Keepalive = b
	}
	if n, ok := sr.cfg.Raw.Value("ssh_keepalive_interval").(int); ok && n >= 0 {
		ro.KeepaliveInterval = n
	}
	if n, ok := sr.cfg.Raw.Value("ssh_keepalive_count_max").(int); ok && n > 0 {
		ro.KeepaliveCountMax = n
	}
}

func (sr *Run) loadTargets(ctx context.Context) ([]roster.Target, error) {
	groups := map[string]any{}
	sr.cfg.SSHListNodegroups.Range(func(k, v any) bool {
		groups[ordered.KeyString(k)] = v
		return true
	})
	rc := roster.Config{
		File:           sr.s.RosterFile,
		ConfigDir:      sr.s.ConfigDir,
		Render:         roster.JinjaRender(jinja.Options{Vars: map[string]any{"opts": sr.cfg.Raw}}),
		RosterDefaults: sr.cfg.RosterDefaults,
		Options:        sr.rosterOptions(),
		ListNodegroups: groups,
		Logger:         sr.log,
	}
	if rc.File == "" {
		if s, ok := sr.cfg.Raw.Value("roster_file").(string); ok {
			rc.File = s
		}
	}
	if err := rosterExtras(&rc, sr.cfg, &sr.s); err != nil {
		return nil, err
	}
	r, err := roster.Open(ctx, sr.s.Roster, rc)
	if err != nil {
		return nil, err
	}
	tgt, kind := sr.rosterQuery()
	return r.Targets(ctx, tgt, kind)
}

func (sr *Run) buildJob() error {
	sr.job.JID = sr.s.JID
	if sr.job.JID == "" {
		sr.job.JID = jid.New(time.Now())
	}
	if sr.s.Raw {
		sr.job.Raw = sr.s.RawCommand
		return nil
	}
	sr.job.Fun = sr.s.Fun
	sr.job.Arg, sr.job.Kwarg = sr.s.Arg, sr.s.Kwarg
	if sr.job.Fun == wrapper.BootstrapFun {
		if sr.s.MasterLink == nil {
			return fmt.Errorf("%s: no master to bootstrap the host against", wrapper.BootstrapFun)
		}
		sr.job.Plan = (&wrapper.Bootstrap{Connect: sr.s.MasterLink, Log: sr.log}).Plan(sr.job.Arg, sr.job.Kwarg)
		return nil
	}
	switch {
	case sr.job.Fun == MineGetFun:
		sr.job.Plan = sr.minePlan(sr.job.Arg, sr.job.Kwarg)
	case sr.job.Fun == wrapper.GetFileFun:
		sr.job.Plan = sr.stateWrapper().PlanGetFile(sr.job.Arg, sr.job.Kwarg)
	case wrapper.IsState(sr.job.Fun):
		sr.job.Plan = sr.stateWrapper().Plan(sr.job.Fun, sr.job.Arg, sr.job.Kwarg)
		sr.job.RefreshGrains = sr.s.Refresh
	case wrapper.IsPillar(sr.job.Fun):
		// The host's pillar is compiled here, as for its states; it
		// answers on the controller, as Salt's pillar wrapper does.
		sr.job.Plan = sr.stateWrapper().PlanPillar(sr.job.Fun, sr.job.Arg, sr.job.Kwarg)
		sr.job.RefreshGrains = sr.s.Refresh
	}
	return nil
}

// stateWrapper renders states on the controller from the master's
// file_roots and pillar_roots (Salt's defaults when unset).
func (sr *Run) stateWrapper() *wrapper.States {
	opts := sr.cfg.Raw.Copy()
	for key, roots := range map[string]map[string][]string{"file_roots": sr.cfg.FileRoots, "pillar_roots": sr.cfg.PillarRoots} {
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
	return &wrapper.States{Opts: opts, States: states.Default, Funcs: modules.Default, Log: sr.log, Mine: sr.mineCall}
}

func (sr *Run) buildExecutor() error {
	// Data-based targeting asks hosts for grains through the thin binary,
	// even for a raw command.
	needThin := !sr.s.Raw || needsData(sr.s.TgtType)
	var bundle *sshexec.Bundle
	if needThin {
		var err error
		if bundle, err = sshexec.OpenBundle(thinSearchDir(), filepath.Join(sr.cfg.CacheDir, "thin")); err != nil {
			return err
		}
	}
	mode := sshconn.HostKeyStrict
	switch {
	case sr.s.NoHostKeys:
		mode = sshconn.HostKeyIgnore
	case sr.s.IgnoreHostKeys:
		mode = sshconn.HostKeyAcceptNew
	}
	defaultKey := roster.DefaultOptions(sr.cfg.PKIDir).Priv
	for _, t := range sr.targets {
		if t.Priv == defaultKey {
			if _, err := sshconn.EnsureKey(sr.cfg.PKIDir); err != nil {
				return fmt.Errorf("create salt-ssh key: %w", err)
			}
			break
		}
	}
	maxProcs := sr.cfg.SSHMaxProcs
	if sr.s.Set["max-procs"] {
		maxProcs = sr.s.MaxProcs
	}
	d, err := newDialer(sr, mode)
	if err != nil {
		return err
	}
	relayOpts, err := sr.relayOptions()
	if err != nil {
		return err
	}
	sr.exec = sshexec.New(sshexec.Options{Relay: relayOpts,
		MaxProcs: maxProcs, Dial: d.dial, Bundle: bundle, FQDN: sshexec.FQDN(),
		Wipe: sr.s.Wipe, Redeploy: sr.s.RegenThin, Log: sr.log, Grains: sr.grainsCache(),
		PreFlightAlways: sr.s.PreFlight || sr.cfg.SSHRunPreFlight, Started: sr.s.Started,
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
