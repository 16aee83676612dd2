package testhosts

import (
	"errors"
	"fmt"
)

// Mode says how a cluster's hosts are networked.
type Mode string

const (
	// ModeAuto picks ModeNetns when network namespaces can be created and
	// ModeLoopback otherwise.
	ModeAuto Mode = ""
	// ModeNetns gives each host its own network namespace and IPv4 address;
	// sshd listens on port 22.
	ModeNetns Mode = "netns"
	// ModeLoopback puts every host on 127.0.0.1 with its own port.
	ModeLoopback Mode = "loopback"
)

// DefaultUser is the hosts' login user (it exists only inside the hosts).
const DefaultUser = "brine"

// DefaultPassword is the login user's password unless Config.Password
// says otherwise.
const DefaultPassword = "brine-test-password"

// defaultPasswordHash is DefaultPassword hashed with a fixed salt
// (`openssl passwd -6 -salt brinetesthosts brine-test-password`), so the
// harness needs no openssl run for the common case.
const defaultPasswordHash = "$6$brinetesthosts$fGsPRKX6Qm5oCdaeia2oAfH2aA//mynJbGEVDCeCng8gnCM0B98IpyIenzSSVOMaMnXcJ29ikwFw0H1sZY6jU."

// MaxHosts is the largest cluster. Up to 253 hosts share a /24 of
// 10.250.0.0/16; a larger cluster gets a /16 of its own (10.251–10.254,
// cluster numbers 250 down to 247, so at most four at once) and its hosts' addresses run on past .255.
// The bound is the Linux bridge's 1024 ports.
const MaxHosts = 1000

// HostOptions are the per-host variations used by fault and sudo tests. The
// zero value is a well-behaved host: passwordless sudo, python3 on PATH,
// public-key login only.
type HostOptions struct {
	// NoSudo leaves the host's sudoers.d empty: the login user has no sudo
	// rights at all.
	NoSudo bool `json:"no_sudo,omitempty"`
	// SudoPassword makes sudo ask for the login user's password
	// (Config.Password) every time, without a lecture.
	SudoPassword bool `json:"sudo_password,omitempty"`
	// SudoKeepEnv adds `Defaults:<user> !env_reset` to the host's
	// sudoers.d: sudo's command inherits the login session's whole
	// environment, so anything secret in it reaches the job's children.
	SudoKeepEnv bool `json:"sudo_keep_env,omitempty"`
	// RequireTTY adds `Defaults requiretty` to the host's sudoers.d, so sudo
	// fails without a pty (Salt's "sudo is configured with requiretty").
	RequireTTY bool `json:"require_tty,omitempty"`
	// PasswordAuth lets the host's sshd accept the login user's password
	// (Config.Password); otherwise only public keys are accepted.
	PasswordAuth bool `json:"password_auth,omitempty"`
	// NoPython hides every python interpreter from the host: overlayfs
	// whiteouts remove the python* entries of the system bin directories and
	// of the controller's PATH, and /root (where pyenv lives here) is private
	// anyway, so `command -v python3` finds nothing, for root and the user.
	NoPython bool `json:"no_python,omitempty"`
	// BehindHost ("host1") puts the host on a private point-to-point link
	// to that host instead of the cluster bridge (ModeNetns only): the
	// controller and the other hosts have no route to it, so it is reached
	// only with ProxyJump through BehindHost. Chains work: host3 behind
	// host2 behind host1 needs two hops. The roster written by the harness
	// gives such hosts the ProxyJump ssh_option. The harness knows such an
	// sshd is up from its log, so Config.LogLevel must be INFO or more.
	BehindHost string `json:"behind_host,omitempty"`
	// HostCert makes sshd present, besides its key, a host certificate
	// signed by the cluster's host CA (HostCA), valid for the host's IP and
	// ID, for @cert-authority known_hosts lines.
	HostCert bool `json:"host_cert,omitempty"`
	// PrivateSystem gives the host its own copy of what package managers
	// write: besides the /etc and /home every host has, overlays of /usr
	// (and /lib, /bin, /sbin where they are directories rather than
	// merged-/usr links), /opt, /var/lib, /var/cache, /var/log, /var/spool,
	// /var/mail and /run, so dpkg, apt-get, rpm and maintainer scripts
	// (useradd, update-rc.d, init scripts writing pid files) install,
	// upgrade and purge inside the host alone and the machine is never
	// touched. The host's writes land in its upper directories and vanish
	// with the cluster. Such a host needs no private /var/log/salt,
	// /var/cache/salt or /run/salt bind mounts (the overlays already hold
	// them; a purge can remove them), so HostPath maps only /etc/salt and
	// the other private paths there. /run/systemd is hidden, so the host
	// is a SysV host and systemctl never reaches the machine's systemd.
	// Not with NoPython.
	PrivateSystem bool `json:"private_system,omitempty"`
}

// needsRoot reports whether o can only be honoured with private mount
// namespaces and a root-owned sshd.
func (o HostOptions) needsRoot() bool {
	return o.NoSudo || o.SudoPassword || o.SudoKeepEnv || o.RequireTTY || o.PasswordAuth || o.NoPython || o.PrivateSystem
}

// Config describes a cluster to Start.
type Config struct {
	// N is the number of hosts, 1..MaxHosts.
	N int
	// Mode selects the networking; ModeAuto by default.
	Mode Mode
	// User is the login user; DefaultUser when empty. Ignored (the current
	// user is used) when not running as root.
	User string
	// Password is User's password on every host of the cluster;
	// DefaultPassword when empty.
	Password string
	// Defaults apply to every host that Hosts does not name.
	Defaults HostOptions
	// Hosts overrides Defaults for the named hosts ("host2").
	Hosts map[string]HostOptions
	// Dir receives roster, known_hosts, key, key.pub and state.json. When
	// empty a directory inside the cluster's work directory is used and
	// removed by Close.
	Dir string
	// Detach starts sshd in their own sessions and marks the cluster as
	// outliving the process that started it: it stays until Close (from Load)
	// or until Dir/state.json disappears and a later Cleanup runs.
	Detach bool
	// LogLevel is sshd's LogLevel; VERBOSE when empty.
	LogLevel string
	// Logf, when set, receives progress lines (t.Logf in tests).
	Logf func(format string, args ...any)
}

// ErrUnsupported is returned for an operation or option that the cluster's
// mode cannot provide (LinkDown in ModeLoopback, NoPython without root).
var ErrUnsupported = errors.New("not supported in this mode")

// ErrNoSSHD means no sshd binary was found; run scripts/install-deps.sh.
var ErrNoSSHD = errors.New("sshd not found (run scripts/install-deps.sh)")

// ErrNoHost is returned for a host ID the cluster does not have.
var ErrNoHost = errors.New("no such host")

// ErrNotPrivate is returned by HostPath for a path that is not under one of
// the host's private directories.
var ErrNotPrivate = errors.New("path is not private to the host")

// ExitError is returned by Exec when the command ran and exited non-zero.
type ExitError struct {
	Host   string
	Code   int
	Stderr string
}

func (e *ExitError) Error() string {
	return fmt.Sprintf("exec on %s: exit status %d: %s", e.Host, e.Code, e.Stderr)
}

func (c Config) withDefaults() (Config, error) {
	if c.N < 1 || c.N > MaxHosts {
		return c, fmt.Errorf("testhosts: N=%d out of range 1..%d", c.N, MaxHosts)
	}
	if c.User == "" {
		c.User = DefaultUser
	}
	if c.Password == "" {
		c.Password = DefaultPassword
	}
	if c.LogLevel == "" {
		c.LogLevel = "VERBOSE"
	}
	if c.Logf == nil {
		c.Logf = func(string, ...any) {}
	}
	switch c.Mode {
	case ModeAuto, ModeNetns, ModeLoopback:
	default:
		return c, fmt.Errorf("testhosts: unknown mode %q", c.Mode)
	}
	for id := range c.Hosts {
		if hostIndex(id) < 1 || hostIndex(id) > c.N {
			return c, fmt.Errorf("testhosts: options for %s: %w", id, ErrNoHost)
		}
	}
	for i := 1; i <= c.N; i++ {
		if err := c.checkBehind(hostID(i)); err != nil {
			return c, err
		}
		if o := c.options(hostID(i)); o.PrivateSystem && o.NoPython {
			return c, fmt.Errorf("testhosts: %s: PrivateSystem and NoPython both overlay /usr; choose one", hostID(i))
		}
	}
	return c, nil
}

// checkBehind refuses a BehindHost that names no host, or that leads back
// to id.
func (c Config) checkBehind(id string) error {
	seen := map[string]bool{id: true}
	for cur := c.options(id).BehindHost; cur != ""; cur = c.options(cur).BehindHost {
		if i := hostIndex(cur); i < 1 || i > c.N {
			return fmt.Errorf("testhosts: %s is behind %s: %w", id, cur, ErrNoHost)
		}
		if seen[cur] {
			return fmt.Errorf("testhosts: %s: BehindHost loops through %s", id, cur)
		}
		seen[cur] = true
	}
	return nil
}

// needsNetns reports whether the cluster can only run in ModeNetns: asked
// for it, or a host is behind another.
func (c Config) needsNetns() bool {
	if c.Mode == ModeNetns {
		return true
	}
	for i := 1; i <= c.N; i++ {
		if c.options(hostID(i)).BehindHost != "" {
			return true
		}
	}
	return false
}

// options returns the HostOptions of host id.
func (c Config) options(id string) HostOptions {
	if o, ok := c.Hosts[id]; ok {
		return o
	}
	return c.Defaults
}
