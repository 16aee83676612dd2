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
	// authentication (Signers, Priv, PrivPassphrase, Password) are ignored.
	// It lets a caller add methods this package does not build yet
	// (ssh-agent, keyboard-interactive prompts) without API changes.
	Auth []ssh.AuthMethod
	// Signers are tried first, in order.
	Signers []ssh.Signer
	// Priv lists private key files (roster "priv"), loaded with LoadSigners.
	Priv []string
	// PrivPassphrase decrypts encrypted keys in Priv (roster "priv_passwd").
	PrivPassphrase []byte
	// IdentitiesOnly restricts authentication to Signers and Priv
	// (roster "identities_only"); it matters once ssh-agent keys are
	// offered, which this package does not do yet.
	IdentitiesOnly bool
	// Password enables password authentication, also answering
	// keyboard-interactive prompts (roster "passwd"). Tried after keys.
	Password string

	// HostKey is the checking mode; the zero value is HostKeyStrict.
	HostKey HostKeyMode
	// KnownHostsFile is Salt's known_hosts_file option; empty means
	// ~/.ssh/known_hosts.
	KnownHostsFile string
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

// AuthMethods builds the authentication methods Dial uses: Config.Auth if
// set, else public keys (Signers, then the Priv files) followed by password
// and keyboard-interactive when Password is set.
func (c *Config) AuthMethods() ([]ssh.AuthMethod, error) {
	if len(c.Auth) > 0 {
		return c.Auth, nil
	}
	signers := append([]ssh.Signer(nil), c.Signers...)
	if len(c.Priv) > 0 {
		loaded, err := LoadSigners(c.Priv, c.PrivPassphrase)
		if err != nil {
			return nil, err
		}
		signers = append(signers, loaded...)
	}
	var methods []ssh.AuthMethod
	if len(signers) > 0 {
		methods = append(methods, ssh.PublicKeys(signers...))
	}
	if c.Password != "" {
		methods = append(methods, ssh.Password(c.Password),
			ssh.KeyboardInteractive(answerWithPassword(c.Password)))
	}
	if len(methods) == 0 {
		return nil, fmt.Errorf("connect %s: no authentication configured (set priv or passwd)", c.Host)
	}
	return methods, nil
}

// answerWithPassword answers every hidden keyboard-interactive prompt with
// the password, which is what sshd's PAM "Password:" prompt wants.
func answerWithPassword(pw string) ssh.KeyboardInteractiveChallenge {
	return func(_, _ string, questions []string, echos []bool) ([]string, error) {
		answers := make([]string, len(questions))
		for i := range questions {
			if !echos[i] {
				answers[i] = pw
			}
		}
		return answers, nil
	}
}
