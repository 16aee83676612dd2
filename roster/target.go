package roster

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
)

// AgentForwarding is the priv value that means "use the ssh agent, no key
// file" (doc/topics/ssh/roster.rst).
const AgentForwarding = "agent-forwarding"

// DefaultThinDirPattern is Salt's DEFAULT_THIN_DIR
// (salt/client/ssh/__init__.py); see DefaultThinDir.
const DefaultThinDirPattern = "/var/tmp/.%%USER%%_%%FQDNUUID%%_salt"

// Target is one host to reach over SSH, with every key a flat roster entry
// may set (doc/topics/ssh/roster.rst, Single.__init__ in
// salt/client/ssh/__init__.py) and Salt's defaults filled in. Secrets are
// of type Secret so a Target prints and logs without them.
type Target struct {
	ID   string // the roster key, the minion ID salt-ssh reports under
	Host string // host; defaults to ID
	Port int    // port; ssh_port, default 22
	User string // user; ssh_user, default root

	Passwd     Secret // passwd; ssh_passwd
	Priv       string // priv; ssh_priv, default <pki_dir>/ssh/salt-ssh.rsa, or AgentForwarding
	PrivPasswd Secret // priv_passwd; ssh_priv_passwd

	Sudo     bool   // sudo; ssh_sudo
	SudoUser string // sudo_user; ssh_sudo_user
	TTY      bool   // tty

	// Timeout is the ssh ConnectTimeout: timeout, else ssh_timeout plus
	// the master's timeout (5) when set, else DefaultConnectTimeout.
	Timeout           time.Duration
	Keepalive         bool // keepalive; ssh_keepalive, default true
	KeepaliveInterval int  // keepalive_interval; ssh_keepalive_interval, default 15 (seconds)
	KeepaliveCountMax int  // keepalive_count_max; ssh_keepalive_count_max, default 3

	// ThinDir is thin_dir; "" means the executor's default
	// (DefaultThinDir), unless Options.ThinDir (-W/--rand-thin-dir) is set.
	ThinDir string
	// CmdUmask is cmd_umask, the umask for salt-call; nil when unset.
	// See parseUmask for how 0077 and 63 are read.
	CmdUmask *int

	MinionOpts         *ordered.Map // minion_opts, merged into the generated minion config
	Grains             *ordered.Map // grains, static grains over the real ones
	MineFunctions      *ordered.Map // mine_functions
	SSHOptions         []string     // ssh_options: "Option=value" passed as -o
	IdentitiesOnly     bool         // identities_only; ssh_identities_only
	RemotePortForwards string       // remote_port_forwards: comma list for -R
	SetPath            string       // set_path: PATH for the shim
	SSHPreFlight       string       // ssh_pre_flight: local script path
	SSHPreFlightArgs   []string     // ssh_pre_flight_args: list, or a string shlex-split
	SSHPreHook         string       // ssh_pre_hook: local command run first
	DisableWipe        bool         // disable_wipe: ignore --wipe for this host
	WinRM              bool         // winrm (Enterprise saltwinshell in Salt)
	SSHPythonEnv       string       // ssh_python_env
	Relenv             bool         // relenv
	// RelayHost and RelayPort are where other hosts reach this one's
	// relay server under salt-ssh --relay (Brine's keys; Salt has no
	// relay): RelayHost defaults to Host, RelayPort to ssh_relay_port.
	RelayHost string // relay_host
	RelayPort int    // relay_port

	// Extra holds keys Brine does not know, kept in roster order (Salt
	// passes them through to Single as **kwargs and ignores them).
	Extra *ordered.Map

	// File and Line locate the entry in its roster ("" and 0 for ad-hoc
	// targets built from the command line).
	File string
	Line int
}

// String names the target without secrets: "web1 (deploy@10.0.0.5:2222)".
func (t Target) String() string {
	return fmt.Sprintf("%s (%s@%s)", t.ID, t.User, net.JoinHostPort(t.Host, strconv.Itoa(t.Port)))
}

// Addr returns host:port for dialing, with IPv6 literals bracketed and
// any brackets written in the roster removed first.
func (t Target) Addr() string {
	h := strings.TrimSuffix(strings.TrimPrefix(t.Host, "["), "]")
	return net.JoinHostPort(h, strconv.Itoa(t.Port))
}

// Options are the master-config and command-line settings that fill in
// what a roster entry leaves out (SSH.__init__ self.defaults). Build them
// with DefaultOptions and override from config and flags.
type Options struct {
	User               string        // ssh_user, --user
	Port               int           // ssh_port
	Passwd             Secret        // ssh_passwd, --passwd
	Priv               string        // ssh_priv, --priv
	PrivPasswd         Secret        // ssh_priv_passwd, --priv-passwd
	Timeout            time.Duration // ssh_timeout + timeout
	Keepalive          bool          // ssh_keepalive
	KeepaliveInterval  int           // ssh_keepalive_interval
	KeepaliveCountMax  int           // ssh_keepalive_count_max
	Sudo               bool          // ssh_sudo, --sudo
	SudoUser           string        // ssh_sudo_user
	IdentitiesOnly     bool          // ssh_identities_only, --identities-only
	RemotePortForwards string        // ssh_remote_port_forwards, --remote-port-forwards
	SSHOptions         []string      // ssh_options, --ssh-option
	ThinDir            string        // set by -W/--rand-thin-dir
}

// Connection defaults for a run. Salt's are meant for one ssh process
// per host and leave a dead host or a cut link holding a --max-procs slot
// for minutes; Brine's are what an operator running over many hosts
// wants:
//
//   - DefaultConnectTimeout (30 s) bounds TCP connect, handshake and
//     authentication. Salt passes ssh ConnectTimeout=ssh_timeout+timeout,
//     60+5 s (salt/client/ssh/__init__.py SSH.__init__); 30 s still
//     covers five SYNs (retries at 1, 3, 7 and 15 s), a slow sshd banner
//     and PAM's failed-password delay, and halves what each unreachable
//     host costs. A configured ssh_timeout (or timeout) keeps Salt's sum.
//   - DefaultKeepaliveInterval (15 s) × DefaultKeepaliveCountMax (3): a
//     keepalive request after 15 s without one answered, and the
//     connection is lost after 3 unanswered ones, so a cut link ends the
//     host's run within 60 s, the same arithmetic as OpenSSH's
//     ServerAliveInterval and ServerAliveCountMax. Salt 3006 passes no
//     ServerAlive options at all (a cut link is noticed only by TCP, after
//     about 15 minutes of retransmissions, or never on an idle session);
//     Salt 3008 passes its ssh_keepalive_interval 60 × count_max 3, up to
//     4 minutes. A keepalive is one small request every 15 s; sshd
//     answers it however long the command runs, so long silent commands
//     are not affected.
const (
	DefaultConnectTimeout    = 30 * time.Second
	DefaultKeepaliveInterval = 15
	DefaultKeepaliveCountMax = 3
)

// DefaultOptions returns the defaults a roster entry starts from: Salt's
// (salt/config/__init__.py DEFAULT_MASTER_OPTS) user root, port 22, key
// <pki_dir>/ssh/salt-ssh.rsa, keepalive on, with Brine's connection
// timeouts (see DefaultConnectTimeout).
func DefaultOptions(pkiDir string) Options {
	if pkiDir == "" {
		pkiDir = "/etc/salt/pki/master"
	}
	return Options{
		User:              "root",
		Port:              22,
		Priv:              filepath.Join(pkiDir, "ssh", "salt-ssh.rsa"),
		Timeout:           DefaultConnectTimeout,
		Keepalive:         true,
		KeepaliveInterval: DefaultKeepaliveInterval,
		KeepaliveCountMax: DefaultKeepaliveCountMax,
	}
}

// DefaultThinDir is Salt's default remote thin directory for user,
// /var/tmp/.<user>_<uuid3(NAMESPACE_DNS, masterFQDN).hex[:6]>_salt. The
// first six hex digits of a UUIDv3 are those of the MD5 sum, which the
// version bits do not touch.
func DefaultThinDir(user, masterFQDN string) string {
	if user == "" {
		user = "root"
	}
	ns := [16]byte{0x6b, 0xa7, 0xb8, 0x10, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8}
	sum := md5.Sum(append(ns[:], masterFQDN...))
	d := strings.ReplaceAll(DefaultThinDirPattern, "%%USER%%", user)
	return strings.ReplaceAll(d, "%%FQDNUUID%%", hex.EncodeToString(sum[:3]))
}
