package sshconn

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"golang.org/x/crypto/ssh"
)

// RunOptions are the less common settings of a remote command.
type RunOptions struct {
	// PTY requests a pseudo-terminal (salt-ssh roster "tty", needed by sudo
	// with requiretty). With a PTY the remote side merges stderr into stdout.
	PTY bool
	// Term is the TERM of the PTY; empty means "xterm".
	Term string
	// Env is sent as "env" requests; sshd drops names its AcceptEnv does not
	// list, so do not rely on it for anything essential.
	Env map[string]string
}

// Run runs cmd through the remote user's shell on a new session. stdin may
// be nil; a non-nil stdin must reach EOF (x/crypto waits for it to be
// copied). A non-zero exit status is returned as the code with a nil error.
// Errors: *ExitError when the command is killed by a signal, ErrConnLost
// when the connection drops, ctx's cause when ctx ends (the remote command
// is sent SIGKILL and the session closed; see the package doc for when
// OpenSSH lets it live on).
func (c *Conn) Run(ctx context.Context, cmd string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	return c.RunWith(ctx, cmd, stdin, stdout, stderr, RunOptions{})
}

// RunWith is Run with options.
func (c *Conn) RunWith(ctx context.Context, cmd string, stdin io.Reader, stdout, stderr io.Writer, opts RunOptions) (int, error) {
	if err := ctx.Err(); err != nil {
		return -1, fmt.Errorf("run on %s: %w", c.addr, context.Cause(ctx))
	}
	sess, err := c.client.NewSession()
	if err != nil {
		return -1, c.lostOr("open session", err)
	}
	defer sess.Close()
	if err := setupSession(sess, opts); err != nil {
		return -1, c.lostOr("set up session", err)
	}
	sess.Stdin, sess.Stdout, sess.Stderr = stdin, stdout, stderr

	stop := context.AfterFunc(ctx, func() {
		sess.Signal(ssh.SIGKILL)
		sess.Close()
	})
	defer stop()
	if err := sess.Start(cmd); err != nil {
		return -1, c.lostOr("start command", err)
	}
	err = sess.Wait()
	if ctx.Err() != nil {
		return -1, fmt.Errorf("run on %s: %w", c.addr, context.Cause(ctx))
	}
	return c.exitStatus(err)
}

func setupSession(sess *ssh.Session, opts RunOptions) error {
	for k, v := range opts.Env {
		// A refused env request is not fatal, as with OpenSSH SendEnv; a
		// dead channel makes Start fail below.
		_ = sess.Setenv(k, v)
	}
	if !opts.PTY {
		return nil
	}
	term := opts.Term
	if term == "" {
		term = "xterm"
	}
	return sess.RequestPty(term, 24, 80, ssh.TerminalModes{ssh.ECHO: 0})
}

// exitStatus maps Session.Wait's result to (code, error).
func (c *Conn) exitStatus(err error) (int, error) {
	var ee *ssh.ExitError
	var missing *ssh.ExitMissingError
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &ee) && ee.Signal() == "":
		return ee.ExitStatus(), nil
	case errors.As(err, &ee):
		return -1, &ExitError{Code: -1, Signal: ee.Signal()}
	case errors.As(err, &missing), errors.Is(err, io.EOF):
		// OpenSSH always sends exit-status or exit-signal; a channel closed
		// without either means the transport went away.
		return -1, fmt.Errorf("run on %s: %w: %w", c.addr, ErrConnLost, err)
	default:
		return -1, c.lostOr("run", err)
	}
}

// Output runs cmd and returns its stdout. A non-zero exit is an *ExitError
// carrying the code and the captured stderr, for callers that treat
// failure as an error (probes such as `test -d <thin_dir>`).
func (c *Conn) Output(ctx context.Context, cmd string, stdin io.Reader) ([]byte, error) {
	var stdout, stderr bytes.Buffer
	code, err := c.Run(ctx, cmd, stdin, &stdout, &stderr)
	var ee *ExitError
	if errors.As(err, &ee) {
		ee.Stderr = stderr.Bytes()
	}
	if err != nil {
		return stdout.Bytes(), err
	}
	if code != 0 {
		return stdout.Bytes(), &ExitError{Code: code, Stderr: stderr.Bytes()}
	}
	return stdout.Bytes(), nil
}
