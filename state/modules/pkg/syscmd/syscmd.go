// Package syscmd runs the system tools behind the pkg, service, user and
// group execution modules (apt-get, dnf, apk, systemctl, service, useradd,
// …). The modules take a Runner so that tests can feed them fake tool
// output and record the commands a call would run ("facts in, commands
// out"); Exec is the Runner that really runs them.
//
// Commands are argument vectors, never shell strings, as Salt's pkg and
// service modules call cmd.run_all with python_shell=False.
package syscmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// Cmd is one command to run.
type Cmd struct {
	Args []string
	// Env holds KEY=VALUE pairs set over the minion's environment, as
	// aptpkg's DPKG_ENV_VARS are.
	Env []string
	// Stdin is fed to the command when not empty (chpasswd and friends).
	Stdin string
}

// String renders the command line for logs and test expectations:
// environment first, then the arguments joined by spaces.
func (c Cmd) String() string {
	parts := append(append([]string(nil), c.Env...), c.Args...)
	return strings.Join(parts, " ")
}

// Result is what a command produced: cmd.run_all's retcode, stdout and
// stderr.
type Result struct {
	Retcode int
	Stdout  string
	Stderr  string
}

// Runner runs a command and waits for it. A non-zero exit status is a
// Result, not an error; an error means the command could not be started
// (the tool is missing, the context ended).
type Runner func(ctx context.Context, c Cmd) (Result, error)

// Exec runs c on this host with the C locale, as cmdmod's
// reset_system_locale does, so that tool output parses the same
// everywhere.
func Exec(ctx context.Context, c Cmd) (Result, error) {
	if len(c.Args) == 0 {
		return Result{}, errors.New("run: empty command")
	}
	cmd := exec.CommandContext(ctx, c.Args[0], c.Args[1:]...)
	cmd.Env = append(append(os.Environ(), "LC_ALL=C", "LANG=C"), c.Env...)
	if c.Stdin != "" {
		cmd.Stdin = strings.NewReader(c.Stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := Result{Stdout: strings.TrimRight(stdout.String(), "\n"), Stderr: strings.TrimRight(stderr.String(), "\n")}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		res.Retcode = exit.ExitCode()
		if res.Retcode < 0 {
			return res, fmt.Errorf("run %s: %w", c.Args[0], err)
		}
		return res, nil
	}
	if err != nil {
		return res, fmt.Errorf("run %s: %w", c.Args[0], err)
	}
	return res, nil
}

// LookPath reports where a tool is installed, "" when it is not: Salt's
// salt.utils.path.which.
type LookPath func(name string) string

// Which is the LookPath of this host.
func Which(name string) string {
	p, err := exec.LookPath(name)
	if err != nil {
		return ""
	}
	return p
}
