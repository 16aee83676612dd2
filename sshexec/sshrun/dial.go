package sshrun

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/roster"
	"github.com/brinesalt/brine/sshexec"
	"github.com/brinesalt/brine/sshexec/sshconn"
)

// dialer turns roster targets into SSH connections, layering, as OpenSSH
// does (first value wins):
//
//  1. explicit roster and command-line values (host, port, user, priv,
//     passwd, priv_passwd, timeout, -i/--no-host-keys, known_hosts_file);
//  2. the target's ssh_options and --ssh-option (OpenSSH -o);
//  3. ssh_config_file (default ~/.ssh/config) for the roster host;
//  4. defaults.
//
// A roster cannot say whether its user and port were written or
// defaulted, so user "root" and port 22 count as defaults unless the
// master config (ssh_user, ssh_port) or --user set them: then ssh_config's
// User and Port apply. IdentityFile values accumulate after priv, as
// OpenSSH adds config identities after -o IdentityFile, and files that do
// not exist are skipped as OpenSSH skips them.
type dialer struct {
	mode       sshconn.HostKeyMode
	modeSet    bool   // -i or --no-host-keys: wins over StrictHostKeyChecking
	knownHosts string // known_hosts_file when set in the master config
	log        *slog.Logger

	sshConfig    *sshconn.SSHConfig
	agentSocket  string // SSH_AUTH_SOCK
	keyDeploy    bool
	userExplicit bool // ssh_user or --user given
	portExplicit bool // ssh_port given

	warned sync.Map // ssh_options keys already warned about
}

// newDialer builds the dialer from the run's config and settings.
func newDialer(sr *Run, mode sshconn.HostKeyMode) (*dialer, error) {
	d := &dialer{
		mode: mode, modeSet: sr.s.NoHostKeys || sr.s.IgnoreHostKeys, log: sr.log,
		agentSocket:  os.Getenv("SSH_AUTH_SOCK"),
		keyDeploy:    sr.s.KeyDeploy,
		userExplicit: sr.s.Set["user"] || sr.cfg.Raw.Value("ssh_user") != nil,
		portExplicit: sr.cfg.Raw.Value("ssh_port") != nil,
	}
	if sr.cfg.Raw.Value("known_hosts_file") != nil {
		d.knownHosts = sr.cfg.KnownHostsFile
	}
	home, _ := os.UserHomeDir()
	file := sr.cfg.SSHConfigFile
	if file == "" {
		file = filepath.Join(home, ".ssh", "config")
	}
	sc, err := sshconn.LoadSSHConfig(file, home)
	if err != nil {
		return nil, fmt.Errorf("ssh_config_file: %w", err)
	}
	d.sshConfig = sc
	return d, nil
}

func (d *dialer) dial(ctx context.Context, t *roster.Target) (sshexec.Conn, error) {
	cfg, err := d.config(t)
	if err != nil {
		return nil, err
	}
	c, err := d.dialDeploying(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// config builds the connection settings of target t.
func (d *dialer) config(t *roster.Target) (cfg sshconn.Config, err error) {
	opts := d.sshOptions(t.SSHOptions)
	userSet := d.userExplicit || t.User != roster.DefaultOptions("").User
	user := ""
	switch {
	case userSet:
		user = t.User
	case opts["user"] != "":
		user = opts["user"]
	}
	hc := d.sshConfig.Lookup(t.Host, user)
	for _, w := range hc.Warnings {
		if _, dup := d.warned.LoadOrStore("ssh_config "+w, true); !dup {
			d.log.Warn("ssh_config_file: "+w, "file", d.sshConfig.File)
		}
	}
	if user == "" {
		user = firstNonEmpty(hc.User, t.User)
	}
	cfg = sshconn.Config{
		Host:           firstNonEmpty(hc.HostName, t.Host),
		Port:           t.Port,
		User:           user,
		Password:       t.Passwd.Reveal(),
		PrivPassphrase: []byte(t.PrivPasswd.Reveal()),
		AgentSocket:    d.agentSocket,
		IdentitiesOnly: t.IdentitiesOnly || yes(opts["identitiesonly"]) || yes(hc.IdentitiesOnly),
		HostKey:        d.mode,
		HashKnownHosts: yes(hc.HashKnownHosts),
		Timeout:        t.Timeout,
		Logger:         d.log,
	}
	if t.Port == 0 || (t.Port == sshconn.DefaultPort && !d.portExplicit) {
		cfg.Port = firstPort(opts["port"], hc.Port)
	}
	if t.Priv == roster.AgentForwarding && d.agentSocket == "" {
		return cfg, &sshconn.AgentError{Socket: "$SSH_AUTH_SOCK", Err: errors.New("priv is agent-forwarding but SSH_AUTH_SOCK is not set")}
	}
	if t.Priv != "" && t.Priv != roster.AgentForwarding {
		cfg.Priv = []string{t.Priv}
	}
	cfg.Priv = appendExisting(cfg.Priv, expandHome(opts["identityfile"]))
	cfg.Priv = appendExisting(cfg.Priv, hc.IdentityFiles...)
	cfg.CertificateFiles = appendExisting(nil, expandHome(opts["certificatefile"]))
	cfg.CertificateFiles = appendExisting(cfg.CertificateFiles, hc.CertificateFiles...)
	d.hostKeySettings(&cfg, opts, hc)
	d.timeouts(&cfg, t, opts, hc)
	if cfg.RemoteForwards, err = sshconn.ParseRemoteForwards(t.RemotePortForwards); err != nil {
		return cfg, fmt.Errorf("connect %s: remote_port_forwards: %w", t.Host, err)
	}
	jumps, err := d.jumps(firstNonEmpty(opts["proxyjump"], hc.ProxyJump), cfg, map[string]bool{})
	if err != nil {
		return cfg, fmt.Errorf("connect %s: %w", t.Host, err)
	}
	cfg.Jumps = jumps
	d.log.Debug("ssh settings", logattr.Host, t.ID, "addr", cfg.Host+":"+strconv.Itoa(cfg.Port), "user", cfg.User,
		"identities", cfg.Priv, "jumps", len(cfg.Jumps), "ssh_config", d.sshConfig.File)
	return cfg, nil
}

// hostKeySettings applies StrictHostKeyChecking and the known_hosts files
// unless the command line or master config decided them.
func (d *dialer) hostKeySettings(cfg *sshconn.Config, opts map[string]string, hc sshconn.HostConfig) {
	if !d.modeSet {
		if m, ok := hostKeyMode(firstNonEmpty(opts["stricthostkeychecking"], hc.StrictHostKeyChecking)); ok {
			cfg.HostKey = m
		}
	}
	cfg.KnownHostsFile = d.knownHosts
	if cfg.KnownHostsFile == "" {
		cfg.KnownHostsFile = expandHome(opts["userknownhostsfile"])
	}
	if cfg.KnownHostsFile == "" && len(hc.UserKnownHostsFiles) > 0 {
		cfg.KnownHostsFile = hc.UserKnownHostsFiles[0]
	}
	if hc.GlobalKnownHostsFiles != nil {
		cfg.GlobalKnownHostsFiles = hc.GlobalKnownHostsFiles
	}
}

// timeouts applies ConnectTimeout (ssh_options over the roster's timeout)
// and the keepalive: ServerAliveInterval from ssh_options or ssh_config,
// else the roster's keepalive settings (Salt passes them to ssh).
func (d *dialer) timeouts(cfg *sshconn.Config, t *roster.Target, opts map[string]string, hc sshconn.HostConfig) {
	if n, err := strconv.Atoi(opts["connecttimeout"]); err == nil && n > 0 {
		cfg.Timeout = time.Duration(n) * time.Second
	}
	if t.Keepalive && t.KeepaliveInterval > 0 {
		cfg.ServerAliveInterval = time.Duration(t.KeepaliveInterval) * time.Second
		cfg.ServerAliveCountMax = t.KeepaliveCountMax
	}
	if hc.ServerAliveInterval > 0 {
		cfg.ServerAliveInterval = hc.ServerAliveInterval
	}
	if hc.ServerAliveCountMax > 0 {
		cfg.ServerAliveCountMax = hc.ServerAliveCountMax
	}
	if n, err := strconv.Atoi(opts["serveraliveinterval"]); err == nil {
		cfg.ServerAliveInterval = time.Duration(n) * time.Second
	}
	if n, err := strconv.Atoi(opts["serveralivecountmax"]); err == nil && n > 0 {
		cfg.ServerAliveCountMax = n
	}
}

// maxJumps bounds a ProxyJump chain expanded through ssh_config.
const maxJumps = 16

// jumps resolves a ProxyJump value into hop configs: each hop's own
// ssh_config settings (HostName, Port, User, IdentityFile, its own
// ProxyJump, prepended), the target's keys and host key policy, and no
// password (it belongs to the target). seen detects a chain that loops
// through ssh_config.
func (d *dialer) jumps(value string, target sshconn.Config, seen map[string]bool) ([]sshconn.Config, error) {
	hops, err := sshconn.ParseProxyJump(value)
	if err != nil {
		return nil, err
	}
	var out []sshconn.Config
	for _, j := range hops {
		key := strings.ToLower(j.String())
		if seen[key] || len(seen) >= maxJumps {
			return nil, fmt.Errorf("%w: %s", sshconn.ErrJumpLoop, j)
		}
		seen[key] = true
		hc := d.sshConfig.Lookup(j.Host, j.User)
		before, err := d.jumps(hc.ProxyJump, target, seen)
		if err != nil {
			return nil, err
		}
		hop := target
		hop.Jumps, hop.Password = nil, ""
		hop.Host = firstNonEmpty(hc.HostName, j.Host)
		hop.User = firstNonEmpty(j.User, hc.User, localUser())
		hop.Port = j.Port
		if hop.Port == 0 {
			hop.Port = firstPort("", hc.Port)
		}
		hop.Priv = appendExisting(append([]string(nil), target.Priv...), hc.IdentityFiles...)
		if len(hc.UserKnownHostsFiles) > 0 && d.knownHosts == "" {
			hop.KnownHostsFile = hc.UserKnownHostsFiles[0]
		}
		out = append(append(out, before...), hop)
	}
	return out, nil
}

// honoured are the ssh_options keys the transport understands.
var honoured = map[string]bool{
	"port": true, "user": true, "identityfile": true, "identitiesonly": true, "certificatefile": true,
	"stricthostkeychecking": true, "userknownhostsfile": true, "connecttimeout": true,
	"serveraliveinterval": true, "serveralivecountmax": true, "proxyjump": true,
	// Salt's own defaults and options that mean nothing without the ssh
	// binary: accepted silently.
	"batchmode": true, "passwordauthentication": true, "kbdinteractiveauthentication": true,
	"gssapiauthentication": true, "controlmaster": true,
}

// sshOptions parses "Key=Value" and "Key Value" entries (ssh -o) into
// lowercased keys, the first value winning; unknown keys are warned about
// once per run.
func (d *dialer) sshOptions(list []string) map[string]string {
	out := map[string]string{}
	for _, o := range list {
		o = strings.TrimSpace(o)
		k, v, ok := strings.Cut(o, "=")
		if !ok {
			k, v, _ = strings.Cut(o, " ")
		}
		k, v = strings.ToLower(strings.TrimSpace(k)), strings.Trim(strings.TrimSpace(v), `"`)
		if k == "" {
			continue
		}
		if !honoured[k] {
			if _, dup := d.warned.LoadOrStore(k, true); !dup {
				d.log.Warn("ssh option not supported by Brine's SSH transport; ignored", "option", k)
			}
			continue
		}
		if _, seen := out[k]; !seen {
			out[k] = v
		}
	}
	return out
}

// hostKeyMode maps StrictHostKeyChecking onto the host key modes: yes and
// ask refuse unknown keys; accept-new, no and off record them (a changed
// key is always refused here, which is stricter than OpenSSH's "no").
func hostKeyMode(v string) (sshconn.HostKeyMode, bool) {
	switch strings.ToLower(v) {
	case "yes", "ask":
		return sshconn.HostKeyStrict, true
	case "accept-new", "no", "off":
		return sshconn.HostKeyAcceptNew, true
	}
	return 0, false
}

func yes(v string) bool { return strings.EqualFold(v, "yes") }

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

func firstPort(opt string, cfgPort int) int {
	if n, err := strconv.Atoi(opt); err == nil && n > 0 && n < 65536 {
		return n
	}
	if cfgPort > 0 {
		return cfgPort
	}
	return sshconn.DefaultPort
}

// appendExisting appends the paths that exist and are not listed yet.
func appendExisting(list []string, paths ...string) []string {
	for _, p := range paths {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err != nil {
			continue
		}
		dup := false
		for _, q := range list {
			dup = dup || q == p
		}
		if !dup {
			list = append(list, p)
		}
	}
	return list
}

func expandHome(p string) string {
	if strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, p[2:])
		}
	}
	return p
}

func localUser() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return sshconn.DefaultUser
}
