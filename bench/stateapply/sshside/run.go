package sshside

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// Outcome is what a run's output says it did.
type Outcome struct {
	HostsOK, Hosts int
	// Changed counts states (Brine) or tasks (Ansible) with changes,
	// summed over the hosts.
	Changed int
	// Note is the first failure the output reports, if any.
	Note string
}

// Sample is one timed run.
type Sample struct {
	Wall, CPU time.Duration
	RSS       int64 // bytes, the largest process of the tree
	Wire      int64 // bytes through the bridge, -1 when unknown
	Outcome
}

// Command is a process to time.
type Command struct {
	Argv []string
	Env  []string // added to the environment
	// Parse reads stdout into an Outcome.
	Parse func(stdout []byte) (Outcome, error)
}

// MemLimit, when positive, is the resident memory (bytes, summed over
// the process group) at which Run kills a command: the machine is shared.
var MemLimit int64 = 6 << 30

// Run times c once with a timeout; a non-zero exit is not an error when
// the output still parses (failed hosts are counted in the Outcome), so
// a flaky host shows in the table instead of ending the benchmark.
func (e *Env) Run(ctx context.Context, c Command, timeout time.Duration) (Sample, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.Argv[0], c.Argv[1:]...)
	cmd.Env = append(cmd.Environ(), c.Env...)
	// Own process group, so a timeout ends Ansible's forks too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	wire := e.wireBytes()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return Sample{}, err
	}
	guardCtx, stopGuard := context.WithCancel(ctx)
	guard := guardMemory(guardCtx, cmd.Process.Pid, MemLimit)
	err := cmd.Wait()
	s := Sample{Wall: time.Since(start), Wire: -1}
	stopGuard()
	if gerr := <-guard; gerr != nil {
		return s, fmt.Errorf("%s: %w", c.Argv[0], gerr)
	}
	if w := e.wireBytes(); wire >= 0 && w >= 0 {
		s.Wire = w - wire
	}
	var ee *exec.ExitError
	if err != nil && (!errors.As(err, &ee) || ctx.Err() != nil) {
		return s, fmt.Errorf("%s: %w: %s", strings.Join(c.Argv, " "), err, Tail(stderr.String()))
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	s.CPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	s.RSS = ru.Maxrss << 10
	out, perr := c.Parse(stdout.Bytes())
	if perr != nil {
		return s, fmt.Errorf("%s (exit %v): %w; stderr: %s", strings.Join(c.Argv, " "), err, perr, Tail(stderr.String()))
	}
	s.Outcome = out
	return s, nil
}

// Tail is the end of a long output, for error messages.
func Tail(s string) string {
	if len(s) > 800 {
		return "…" + s[len(s)-800:]
	}
	return s
}
