package sshexec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"

	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/roster"
)

// preHook runs the target's ssh_pre_hook on the controller before the
// host is connected to, for every run and every host that sets it (Salt
// 3008, salt/client/ssh/__init__.py Single.run; doc/topics/ssh/roster.rst:
// "the execution of a script on the origin server before any SSH
// connection attempts are made", e.g. to sign a short-lived SSH
// certificate). Salt's code hands the command to Shell.exec_cmd, which
// would run it on the target over the very connection the hook is meant
// to prepare; Brine follows the documented behaviour and the feature
// request (saltstack/salt#66210) and runs it locally with /bin/sh -c.
//
// As in Salt, the hook's output is dropped when it succeeds; when it
// exits non-zero the host is not contacted and its result is the hook's
// {stdout, stderr, retcode}.
func (e *Executor) preHook(ctx context.Context, t *roster.Target) (Result, bool) {
	log := e.opts.Log.With(logattr.Host, t.ID)
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", t.SSHPreHook)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	switch {
	case err == nil:
		log.Info("Successfully ran the ssh_pre_hook script", "script", t.SSHPreHook)
		return Result{}, false
	case ctx.Err() != nil:
		return failure(t.ID, fmt.Errorf("ssh_pre_hook: %w", context.Cause(ctx)), 1), true
	case errors.As(err, &exit) && exit.ExitCode() > 0:
		code = exit.ExitCode()
	default:
		code = 1 // killed by a signal, or /bin/sh could not start
		if stderr.Len() == 0 {
			stderr.WriteString(err.Error())
		}
	}
	log.Error("Error running ssh_pre_hook script", "script", t.SSHPreHook, "retcode", code)
	return shellReturn(t.ID, stdout.String(), stderr.String(), code, fmt.Errorf("ssh_pre_hook exited %d", code)), true
}
