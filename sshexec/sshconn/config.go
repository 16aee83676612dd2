package sshconn

import (
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"golang.org/x/crypto/ssh"
)

// HostKeyMode selects how the server's host key is checked against the
// known_hosts file.
type HostKeyMode int

const (
	// HostKeyStrict refuses unknown and changed keys (salt-ssh's default,
	// OpenSSH StrictHostKeyChecking=yes).
	HostKeyStrict HostKeyMode = iota
	// HostKeyAcceptNew records unknown keys in the known_hosts file and
	// still refuses a changed key (salt-ssh -i/--ignore-host-keys, OpenSSH
	// StrictHostKeyChecking=accept-new).
	HostKeyAcceptNew
	// HostKeyIgnore accepts any key and records nothing (salt-ssh
	// --no-host-keys, i.e. UserKnownHostsFile=/dev/null).
	HostKeyIgnore
)

func (m HostKeyMode) String() string {
	switch m {
	case HostKeyStrict:
		return "strict"
	case HostKeyAcceptNew:
		return "accept-new"
	case HostKeyIgnore:
		return "ignore"
	}
	return "HostKeyMode(" + strconv.Itoa(int(m)) + ")"
}

// DefaultPort is the SSH port used when Config.Port is zero.
const DefaultPort = 22

// DefaultUser is the login user when Config.User is empty (Salt's ssh_user
// default).
const DefaultUser = "root"

// Config describes one connection. The zero value of every optional field
// is usable.
type Config struct {
	// Host is a DNS name or IP address (IPv6 without brackets).
	Host string
	// Port defaults to DefaultPort.
	Port int
	// User defaults to DefaultUser.
	User string

	// Auth, when non-empty, is used as-is and the fields below that build
	// authentication (Signers, Priv, PrivPassphrase, AgentSocket,
	// CertificateFiles, Password) are ignored.
	Auth []ssh.AuthMethod
	// Signers are tried first, in order.
	Signers []ssh.Signer
	// Priv lists private key files (roster "priv"), loaded with LoadSigners.
	Priv []string
	// PrivPassphrase decrypts encrypted keys in Priv (roster "priv_passwd").
	PrivPassphrase []byte
	// CertificateFiles are OpenSSH user certificates (ssh_config
	// CertificateFile) presented with the key they certify, whether that
	// key comes from Signers, Priv or the agent. A "<priv>-cert.pub" next
	// to a Priv file is used without being listed.
	CertificateFiles []string
	// AgentSocket is the ssh-agent's socket (SSH_AUTH_SOCK); its keys are
	// offered after Signers and Priv. Empty means no agent.
	AgentSocket string
	// IdentitiesOnly restricts the agent's keys to the public halves of
	// Signers and Priv (roster "identities_only", OpenSSH IdentitiesOnly).
	// Without Signers and Priv every agent key is an identity (roster
	// "priv: agent-forwarding").
	IdentitiesOnly bool
	// Password enables password authentication, also answering
	// keyboard-interactive prompts (roster "passwd"). Tried after keys.
	Password string

	// Jumps are the ProxyJump hosts in order: the first is dialled
	// directly, each next one through the one before, the target through
	// the last. Each hop has its own user, auth and host key settings;
	// their own Jumps are ignored (flatten chains first). A hop repeated in
	// the chain is ErrJumpLoop.
	Jumps []Config

	// HostKey is the checking mode; the zero value is HostKeyStrict.
	HostKey HostKeyMode
	// KnownHostsFile is Salt's known_hosts_file option; empty means
	// ~/.ssh/known_hosts.
	KnownHostsFile string
	// GlobalKnownHostsFiles are read, never written, in addition to
	// KnownHostsFile (OpenSSH GlobalKnownHostsFile); nil means
	// DefaultGlobalKnownHostsFiles. Missing files are skipped.
	GlobalKnownHostsFiles []string
	// HashKnownHosts records new hosts hashed, like OpenSSH's
	// HashKnownHosts (on in Debian's ssh_config). Hashed and plain entries
	// are both read either way.
	HashKnownHosts bool

	// Timeout bounds TCP connect, handshake and authentication together
	// (roster "timeout"); zero means only ctx bounds them.
	Timeout time.Duration
	// KeepAlive is the TCP keepalive period; zero means Go's default (15s),
	// negative disables keepalives.
	KeepAlive time.Duration
	// ServerAliveInterval, when positive, sends an SSH keepalive request
	// this often; after ServerAliveCountMax (default 3) unanswered ones
	// the connection is closed and counts as lost (OpenSSH options of the
	// same names).
	ServerAliveInterval time.Duration
	ServerAliveCountMax int

	// RemoteForwards are OpenSSH -R forwards set up once connected (roster
	// "remote_port_forwards"); one the server refuses is a warning.
	RemoteForwards []RemoteForward

	// Logger receives debug and warning records; nil discards them.
	Logger *slog.Logger
}

// LogKeyHost is the slog attribute key naming the target host.
const LogKeyHost = "host"

func (c *Config) port() int {
	if c.Port == 0 {
		return DefaultPort
	}
	return c.Port
}

func (c *Config) user() string {
	if c.User == "" {
		return DefaultUser
	}
	return c.User
}

func (c *Config) addr() string {
	return net.JoinHostPort(c.Host, strconv.Itoa(c.port()))
}

func (c *Config) logger() *slog.Logger {
	if c.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Logger
}

// DefaultGlobalKnownHostsFiles is OpenSSH's GlobalKnownHostsFile default.
var DefaultGlobalKnownHostsFiles = []string{"/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2"}

func (c *Config) globalKnownHosts() []string {
	if c.GlobalKnownHostsFiles == nil {
		return DefaultGlobalKnownHostsFiles
	}
	return c.GlobalKnownHostsFiles
}

// pubKeyPath is the public key a user should deploy when authentication
// fails: the first Priv file's ".pub" companion, as Salt's key_deploy uses.
func (c *Config) pubKeyPath() string {
	if len(c.Auth) > 0 || len(c.Priv) == 0 {
		return ""
	}
	return c.Priv[0] + ".pub"
}

func (c *Config) knownHostsFile() (string, error) {
	if c.KnownHostsFile != "" {
		return c.KnownHostsFile, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("locate known_hosts: %w", err)
	}
	return filepath.Join(home, ".ssh", "known_hosts"), nil
}
