//go:build !windows

package shell

import (
	"context"
	"os/exec"
	"syscall"
)

// command builds `<shell> -c cmd` (through su for another user), in its
// own process group so that a timeout or cancellation stops the whole
// command, not only the shell.
func command(ctx context.Context, s Spec) (*exec.Cmd, error) {
	sh := s.Shell
	if sh == "" {
		sh = "/bin/sh"
	}
	var cmd *exec.Cmd
	if s.RunAs != "" && !isCurrentUser(s.RunAs) {
		cmd = exec.CommandContext(ctx, "su", "-s", sh, "-", s.RunAs, "-c", s.Cmd)
	} else {
		cmd = exec.CommandContext(ctx, sh, "-c", s.Cmd)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	return cmd, nil
}

func rootDir() string { return "/" }
