package sshexec

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/roster"
	"github.com/brinesalt/brine/sshexec/sshconn"
)

// Retcodes of transport failures, as OpenSSH and salt-ssh report them.
const (
	retSSH       = 255 // ssh's own failure exit status
	retHostKey   = 254 // salt/client/ssh/shell.py: key needs accepting
	retNoConnect = 255
)

// shellReturn is Salt's shape for a host whose output held no result:
// {stdout, stderr, retcode} (salt/client/ssh/__init__.py handle_routine).
func shellReturn(id, stdout, stderr string, code int, err error) Result {
	return Result{ID: id, Retcode: code, Err: err, Return: ordered.FromPairs(
		"stdout", stdout, "stderr", stderr, "retcode", code)}
}

// connectFailure turns a dial error into the result Salt users know.
// Unreachable hosts print as a bare "ssh: …" string, as salt-ssh shows
// OpenSSH's message; the others as {stdout, stderr, retcode}.
func connectFailure(t *roster.Target, err error) Result {
	switch {
	case errors.Is(err, sshconn.ErrHostKeyUnknown):
		return shellReturn(t.ID, "", err.Error(), retHostKey, err)
	case errors.Is(err, sshconn.ErrAuthFailed), errors.Is(err, sshconn.ErrHostKeyMismatch):
		return shellReturn(t.ID, "", err.Error(), retSSH, err)
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "ssh: ") {
		msg = fmt.Sprintf("ssh: connect to host %s port %d: %s", t.Host, t.Port, msg)
	}
	return Result{ID: t.ID, Return: msg, Retcode: retNoConnect, Err: err}
}

// sessionFailure is a connection that broke while a command ran.
func sessionFailure(id string, err error, stdout, stderr string) Result {
	if stderr == "" {
		stderr = err.Error()
	}
	return shellReturn(id, stdout, stderr, retSSH, err)
}

// shimErrors maps what a host printed to Salt's explanations
// (salt/client/ssh/__init__.py categorize_shim_errors), plus sudo
// refusals Salt leaves raw.
var shimErrors = []struct {
	code int // 0: match on the pattern alone
	re   *regexp.Regexp
	msg  string
	err  error // the sentinel callers branch on, if any
}{
	{0, regexp.MustCompile(`sudo: (a password is required|no tty present and no askpass program specified)`), "sudo expected a password, NOPASSWD required", errSudoPassword},
	{0, regexp.MustCompile(`sudo: sorry, you must have a tty to run sudo`), "sudo is configured with requiretty", errRequireTTY},
	{0, regexp.MustCompile(`incorrect password attempts?`), "sudo refused the password", errSudoPassword},
	{0, regexp.MustCompile(`is not in the sudoers file|is not allowed to (run sudo|execute)`), "the login user may not use sudo on this host:\n ", errSudoRefused},
	{exitThinChecksum, regexp.MustCompile(`checksum mismatched|thin unpack failed`), "The salt thin transfer was corrupted", nil},
	{exitCantCreate, regexp.MustCompile(`exists but is not a directory|owned by another user`), "A necessary path for salt thin unexpectedly exists:\n ", nil},
	{0, regexp.MustCompile(`Permission denied`), "Permissions problem, target user may need to be root or use sudo:\n ", nil},
}

// Sentinels for sudo failures; the executor retries requiretty hosts
// with a pty.
var (
	errSudoPassword = errors.New("sudo needs a password")
	errRequireTTY   = errors.New("sudo requires a tty")
	errSudoRefused  = errors.New("sudo refused")
)

// shimFailure is a session that ran but produced no result frame.
func shimFailure(id, stdout, stderr string, code int) Result {
	for _, e := range shimErrors {
		if (e.code != 0 && code == e.code) || e.re.MatchString(stderr) {
			msg := e.msg
			if strings.HasSuffix(msg, "\n ") {
				msg += strings.TrimSpace(stderr)
			}
			err := errors.New(msg)
			if e.err != nil {
				err = fmt.Errorf("%w: %s", e.err, msg)
			}
			return shellReturn(id, "ERROR: "+msg, stderr, code, err)
		}
	}
	if code == 0 {
		code = 1
	}
	return shellReturn(id, stdout, stderr, code, errNoResult)
}
