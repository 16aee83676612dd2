package sshexec

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/jid"
	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/roster"
)

// preflight runs the target's ssh_pre_flight script, as Salt does before
// deploying (salt/client/ssh/__init__.py run_ssh_pre_flight): only when
// thin_dir does not exist yet, unless PreFlightAlways. The script goes
// over SFTP to a private temporary name, runs with /bin/sh and its
// ssh_pre_flight_args, and is removed. A failing script ends the host's
// run with the script's {stdout, stderr, retcode}.
func (e *Executor) preflight(ctx context.Context, conn Conn, t *roster.Target, p scriptParams, tm *Timings) (Result, bool) {
	start := time.Now()
	defer func() { tm.Run += time.Since(start) }()
	if !e.opts.PreFlightAlways {
		code, err := conn.Run(ctx, "test -d "+shellQuote(p.ThinDir), nil, nil, nil)
		if err != nil {
			return sessionFailure(t.ID, err, "", ""), true
		}
		if code == 0 {
			return Result{}, false
		}
	}
	f, err := os.Open(t.SSHPreFlight)
	if err != nil {
		return failure(t.ID, fmt.Errorf("ssh_pre_flight: %w", err), 1), true
	}
	defer f.Close()
	remote := "/tmp/.brine-pre-flight-" + jid.RandomHex(6)
	if err := conn.Upload(ctx, f, remote, 0o700); err != nil {
		return failure(t.ID, fmt.Errorf("ssh_pre_flight: %w", err), 1), true
	}
	args := make([]string, len(t.SSHPreFlightArgs))
	for i, a := range t.SSHPreFlightArgs {
		args[i] = shellQuote(a)
	}
	cmd := fmt.Sprintf("/bin/sh %s %s; rc=$?; rm -f %s; exit $rc", shellQuote(remote), strings.Join(args, " "), shellQuote(remote))
	var stdout, stderr bytes.Buffer
	code, err := conn.Run(ctx, cmd, nil, &stdout, &stderr)
	if err != nil {
		return sessionFailure(t.ID, err, stdout.String(), stderr.String()), true
	}
	if code != 0 {
		e.opts.Log.Error("Error running ssh_pre_flight script", logattr.Host, t.ID, "script", t.SSHPreFlight)
		return Result{ID: t.ID, Retcode: code, Err: fmt.Errorf("ssh_pre_flight exited %d", code), Return: ordered.FromPairs(
			"stdout", stdout.String(), "stderr", stderr.String(), "retcode", code)}, true
	}
	return Result{}, false
}
