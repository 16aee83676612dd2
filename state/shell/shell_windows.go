package shell

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
)

// command builds `cmd.exe /c cmd` as Salt's cmdmod does on Windows with
// python_shell (salt/platform/win.py prepend_cmd): the command line is
// passed as written, since cmd.exe does its own parsing. Another user
// needs a password on Windows, which unless/onlyif checks do not carry,
// so RunAs other than the minion's own user is refused.
func command(ctx context.Context, s Spec) (*exec.Cmd, error) {
	if s.RunAs != "" && !isCurrentUser(s.RunAs) {
		return nil, fmt.Errorf("run %q as %s: runas needs a password on Windows and is not supported here", s.Cmd, s.RunAs)
	}
	sh := s.Shell
	if sh == "" || sh == "/bin/sh" {
		sh = comspec()
	}
	cmd := exec.CommandContext(ctx, sh)
	cmd.SysProcAttr = &syscall.SysProcAttr{CmdLine: syscall.EscapeArg(sh) + " /c " + s.Cmd}
	return cmd, nil
}

// comspec is Salt's default Windows shell (salt/grains/extra.py shell):
// %COMSPEC%, else C:\Windows\system32\cmd.exe.
func comspec() string {
	if c := os.Getenv("COMSPEC"); c != "" {
		return c
	}
	return `C:\Windows\system32\cmd.exe`
}

// rootDir is os.path.abspath(os.sep): the root of the system drive.
func rootDir() string {
	if d := os.Getenv("SystemDrive"); d != "" {
		return d + `\`
	}
	r, _ := filepath.Abs(`\`)
	return r
}
