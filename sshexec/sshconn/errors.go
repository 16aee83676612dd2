package sshconn

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/crypto/ssh"
)

// Sentinel errors. Every error returned by this package that belongs to one
// of these classes matches it with errors.Is; callers never inspect
// messages.
var (
	// ErrConnect means the TCP connection or the SSH handshake could not be
	// completed: refused, unreachable, timed out, or the peer hung up before
	// authentication. The cause is wrapped alongside it.
	ErrConnect = errors.New("cannot connect")

	// ErrAuthFailed means the server rejected every authentication method
	// (Salt reports this as "Permission denied"). The concrete error is an
	// *AuthError whose message says how to install the key.
	ErrAuthFailed = errors.New("permission denied")

	// ErrHostKeyUnknown means the host is not in known_hosts and the
	// HostKeyStrict mode refused to trust it. The concrete error is a
	// *HostKeyError.
	ErrHostKeyUnknown = errors.New("host key unknown")

	// ErrHostKeyMismatch means known_hosts holds a different key for the
	// host (or the offered key is revoked). It is returned in every mode but
	// HostKeyIgnore. The concrete error is a *HostKeyError.
	ErrHostKeyMismatch = errors.New("host key mismatch")

	// ErrConnLost means the connection dropped while a session or an SFTP
	// transfer was in progress.
	ErrConnLost = errors.New("connection lost")

	// ErrNoAgentKeys means the ssh-agent was the only identity source and
	// holds no keys. The concrete error is an *AgentError.
	ErrNoAgentKeys = errors.New("ssh-agent holds no keys")

	// ErrJumpLoop means a ProxyJump chain names the same host twice (or
	// names the target itself).
	ErrJumpLoop = errors.New("ProxyJump loop")
)

// hostKeyAcceptHint is Salt's wording for an unknown host key
// (salt/client/ssh/shell.py, Shell._run_cmd).
const hostKeyAcceptHint = "The host key needs to be accepted, to auto accept run salt-ssh with the -i flag"

// ExitError reports a remote command that did not exit normally with a
// status, or (from Output) one that exited non-zero. Run itself returns a
// non-zero status as a code, not as an error.
type ExitError struct {
	// Code is the exit status, or -1 when the command died of a signal.
	Code int
	// Signal is the signal name without "SIG" ("KILL") when the command was
	// killed, else empty.
	Signal string
	// Stderr holds the captured standard error when the caller did not
	// stream it elsewhere.
	Stderr []byte
}

func (e *ExitError) Error() string {
	if e.Signal != "" {
		return fmt.Sprintf("remote command killed by signal %s", e.Signal)
	}
	msg := fmt.Sprintf("remote command exited with status %d", e.Code)
	if s := strings.TrimSpace(string(e.Stderr)); s != "" {
		msg += ": " + s
	}
	return msg
}

// AuthReason says why authentication failed, as far as the client can
// tell.
type AuthReason int

const (
	// AuthKeysRejected: no offered key was accepted and no password was
	// tried (the server may not allow passwords).
	AuthKeysRejected AuthReason = iota
	// AuthWrongPassword: the password was sent and refused.
	AuthWrongPassword
	// AuthAccountLocked: the server said the account is locked, expired
	// or not allowed to log in.
	AuthAccountLocked
)

// AuthError is the concrete error for ErrAuthFailed. Its message follows
// Salt's key deployment advice (salt/client/ssh/__init__.py, SSH.key_deploy,
// and doc/topics/ssh/index.rst).
type AuthError struct {
	User, Host string
	Port       int
	// PubKeyPath is the public key to deploy, when known (<priv>.pub).
	PubKeyPath string
	// Reason classifies the failure.
	Reason AuthReason
	// Message is what the server said (banner, PAM instruction), if anything.
	Message string
	// Err is the cause reported by the SSH library.
	Err error
}

func (e *AuthError) Error() string {
	target := e.User + "@" + e.Host
	switch e.Reason {
	case AuthAccountLocked:
		return fmt.Sprintf("Permission denied for %s: the account is locked or expired (server said: %s)", target, e.Message)
	case AuthWrongPassword:
		return fmt.Sprintf("Permission denied for %s: wrong password (check --passwd or the roster's passwd)", target)
	}
	copyID := "ssh-copy-id -i " + e.PubKeyPath
	if e.Port != 0 && e.Port != DefaultPort {
		copyID += " -p " + strconv.Itoa(e.Port)
	}
	if e.PubKeyPath == "" {
		return fmt.Sprintf("Permission denied for %s: install a public key in the user's ~/.ssh/authorized_keys, "+
			"or run salt-ssh with --key-deploy --passwd to deploy the salt-ssh key", target)
	}
	return fmt.Sprintf("Permission denied for %s: run salt-ssh with --key-deploy --passwd to deploy the salt-ssh key, "+
		"or install it yourself with: %s %s", target, copyID, target)
}

// Unwrap returns ErrAuthFailed and the library's cause.
func (e *AuthError) Unwrap() []error { return []error{ErrAuthFailed, e.Err} }

// HostKeyError is the concrete error for ErrHostKeyUnknown and
// ErrHostKeyMismatch.
type HostKeyError struct {
	// Err is ErrHostKeyUnknown or ErrHostKeyMismatch.
	Err error
	// Host is the host in known_hosts form ("web1" or "[web1]:2222").
	Host string
	// Key is the key the server offered.
	Key ssh.PublicKey
	// KnownHostsFile is the file consulted.
	KnownHostsFile string
	// Line is the known_hosts line holding the conflicting (or revoked) key;
	// 0 for an unknown host.
	Line int
	// Revoked is set when the offered key is marked @revoked.
	Revoked bool
}

func (e *HostKeyError) Error() string {
	fp := ssh.FingerprintSHA256(e.Key)
	switch {
	case e.Err == ErrHostKeyUnknown:
		return fmt.Sprintf("%s: host %s offered %s key %s, which is not in %s",
			hostKeyAcceptHint, e.Host, e.Key.Type(), fp, e.KnownHostsFile)
	case e.Revoked:
		return fmt.Sprintf("host key for %s is REVOKED: %s key %s is marked @revoked in %s:%d",
			e.Host, e.Key.Type(), fp, e.KnownHostsFile, e.Line)
	default:
		return fmt.Sprintf("REMOTE HOST IDENTIFICATION HAS CHANGED for %s: it offered %s key %s, "+
			"but %s:%d holds a different key; someone could be eavesdropping (man-in-the-middle), "+
			"or the host key has just been changed. If the change is expected, remove the old key with: "+
			"ssh-keygen -R '%s' -f %s",
			e.Host, e.Key.Type(), fp, e.KnownHostsFile, e.Line, e.Host, e.KnownHostsFile)
	}
}

// Unwrap returns the sentinel.
func (e *HostKeyError) Unwrap() error { return e.Err }

// PassphraseError is returned by LoadSigners for an encrypted private key
// when no passphrase, or a wrong one, was given.
type PassphraseError struct {
	Path string
	// Incorrect is set when a passphrase was given but did not decrypt the key.
	Incorrect bool
}

func (e *PassphraseError) Error() string {
	if e.Incorrect {
		return fmt.Sprintf("private key %s: incorrect passphrase (check --priv-passwd or the roster's priv_passwd)", e.Path)
	}
	return fmt.Sprintf("private key %s is encrypted: give its passphrase with --priv-passwd or the roster's priv_passwd", e.Path)
}

// KeyError reports a private key or certificate file that cannot be read
// or parsed. Encrypted keys without their passphrase are *PassphraseError.
type KeyError struct {
	Path string
	Err  error
}

func (e *KeyError) Error() string {
	return fmt.Sprintf("load key %s: %v", e.Path, e.Err)
}

// Unwrap returns the cause (fs.ErrNotExist, fs.ErrPermission, a parse error).
func (e *KeyError) Unwrap() error { return e.Err }

// AgentError reports an ssh-agent that is needed but unusable: its socket
// cannot be reached, or it holds no keys (ErrNoAgentKeys).
type AgentError struct {
	Socket string
	Err    error
}

func (e *AgentError) Error() string {
	if errors.Is(e.Err, ErrNoAgentKeys) {
		return fmt.Sprintf("ssh-agent at %s holds no keys: add one with ssh-add, or set priv in the roster", e.Socket)
	}
	return fmt.Sprintf("ssh-agent at %s: %v (is SSH_AUTH_SOCK current?)", e.Socket, e.Err)
}

// Unwrap returns the cause.
func (e *AgentError) Unwrap() error { return e.Err }

// JumpError reports a failure to reach or pass through a ProxyJump host,
// naming it; Err keeps its class (ErrConnect, ErrAuthFailed, a host key
// error), so errors.Is still works through it.
type JumpError struct {
	// Hop is the jump host as user@host:port.
	Hop string
	// Index is its position in the chain, from 0.
	Index int
	Err   error
}

func (e *JumpError) Error() string {
	return fmt.Sprintf("via ProxyJump host %s: %v", e.Hop, e.Err)
}

// Unwrap returns the cause.
func (e *JumpError) Unwrap() error { return e.Err }

// lockedWords are what sshd and PAM say about an account that may not log
// in ("account is locked", "Your account has expired", "not allowed").
var lockedWords = []string{"locked", "expired", "not allowed", "disabled"}

// classifyHandshake turns an error from the SSH handshake into this
// package's classes. It is the one place that looks at x/crypto's error
// text, because x/crypto exports no type for "no auth method left" nor for
// sshd's "Too many authentication failures" disconnect.
func classifyHandshake(cfg *Config, addr string, err error, a *auth) error {
	var hk *HostKeyError
	if errors.As(err, &hk) {
		return hk
	}
	msg := err.Error()
	if strings.Contains(msg, "unable to authenticate") ||
		strings.Contains(msg, "Too many authentication failures") {
		ae := &AuthError{User: cfg.user(), Host: cfg.Host, Port: cfg.port(), PubKeyPath: cfg.pubKeyPath(), Err: err}
		a.mu.Lock()
		defer a.mu.Unlock()
		said := strings.Join(a.messages, "; ")
		switch {
		case containsAny(strings.ToLower(said), lockedWords):
			ae.Reason, ae.Message = AuthAccountLocked, said
		case a.password:
			ae.Reason = AuthWrongPassword
		}
		return ae
	}
	return fmt.Errorf("connect %s: %w: %w", addr, ErrConnect, err)
}

func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}
