// Package shell runs commands the way Salt's cmdmod does for states and
// for unless/onlyif checks (salt/modules/cmdmod.py _run with
// python_shell=True): through `<shell> -c`, optionally as another user,
// in a working directory that defaults to that user's home.
package shell

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"sort"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
)

// Spec is one command to run.
type Spec struct {
	Cmd   string
	Shell string // default /bin/sh
	Cwd   string // default: the home of RunAs, or of the current user
	RunAs string
	Env   any // a mapping or a list of one-key mappings, merged over os.Environ
	// PrependPath is put in front of PATH (cmdmod's prepend_path).
	PrependPath string
	Timeout     time.Duration
	// SuccessRetcodes are exit codes reported as 0.
	SuccessRetcodes []int
	// SuccessStdout and SuccessStderr report 0 when stdout or stderr
	// contains one of them (cmdmod's success_stdout/success_stderr).
	SuccessStdout, SuccessStderr []string
}

// Output is cmd.run_all's return.
type Output struct {
	PID     int
	Retcode int
	Stdout  string
	Stderr  string
}

// Map returns the output as Salt's run_all dict: pid, retcode, stdout, stderr.
func (o Output) Map() *ordered.Map {
	return ordered.FromPairs("pid", o.PID, "retcode", o.Retcode, "stdout", o.Stdout, "stderr", o.Stderr)
}

// Run runs s and waits for it. A non-zero exit is not an error; an error
// means the command could not be started.
func Run(ctx context.Context, s Spec) (Output, error) {
	if s.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.Timeout)
		defer cancel()
	}
	cmd, err := command(ctx, s)
	if err != nil {
		return Output{}, err
	}
	cwd, err := workdir(s)
	if err != nil {
		return Output{}, err
	}
	cmd.Dir = cwd
	cmd.WaitDelay = time.Second
	env, err := environ(s.Env)
	if err != nil {
		return Output{}, err
	}
	if s.PrependPath != "" {
		env = prependPath(env, s.PrependPath)
	}
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		return Output{}, fmt.Errorf("run %q: %w", s.Cmd, err)
	}
	o := Output{PID: cmd.Process.Pid}
	werr := cmd.Wait()
	var exitErr *exec.ExitError
	switch {
	case werr == nil:
	case errors.As(werr, &exitErr):
		o.Retcode = exitErr.ExitCode()
		if o.Retcode < 0 {
			o.Retcode = 1
		}
	default:
		return Output{}, fmt.Errorf("run %q: %w", s.Cmd, werr)
	}
	o.Stdout = strings.TrimRight(out.String(), " \t\r\n")
	o.Stderr = strings.TrimRight(errb.String(), " \t\r\n")
	if ctx.Err() != nil && s.Timeout > 0 {
		o.Retcode = 1
		o.Stdout = fmt.Sprintf("Timed out after %v seconds", s.Timeout.Seconds())
	}
	for _, rc := range s.SuccessRetcodes {
		if rc == o.Retcode {
			o.Retcode = 0
		}
	}
	for _, x := range s.SuccessStdout {
		if strings.Contains(o.Stdout, x) {
			o.Retcode = 0
		}
	}
	for _, x := range s.SuccessStderr {
		if strings.Contains(o.Stderr, x) {
			o.Retcode = 0
		}
	}
	return o, nil
}

func isCurrentUser(name string) bool {
	u, err := user.Current()
	return err == nil && u.Username == name
}

func workdir(s Spec) (string, error) {
	if s.Cwd != "" {
		return s.Cwd, nil
	}
	if s.RunAs != "" {
		if u, err := user.Lookup(s.RunAs); err == nil {
			return u.HomeDir, nil
		}
		return "", fmt.Errorf("user %q is not available", s.RunAs)
	}
	if h, err := os.UserHomeDir(); err == nil {
		if st, err := os.Stat(h); err == nil && st.IsDir() {
			return h, nil
		}
	}
	return rootDir(), nil
}

// environ merges a Salt env argument over the process environment.
func environ(v any) ([]string, error) {
	base := os.Environ()
	add := map[string]string{}
	var merge func(v any) error
	merge = func(v any) error {
		switch x := v.(type) {
		case nil:
		case *ordered.Map:
			x.Range(func(k, val any) bool {
				add[ordered.KeyString(k)] = ordered.KeyString(val)
				return true
			})
		case []any:
			for _, e := range x {
				if err := merge(e); err != nil {
					return err
				}
			}
		default:
			return fmt.Errorf("invalidly-formatted 'env' parameter")
		}
		return nil
	}
	if err := merge(v); err != nil {
		return nil, err
	}
	if len(add) == 0 {
		return base, nil
	}
	out := base[:0:0]
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if _, over := add[k]; !over {
			out = append(out, kv)
		}
	}
	keys := make([]string, 0, len(add))
	for k := range add {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, k+"="+add[k])
	}
	return out, nil
}

func prependPath(env []string, dir string) []string {
	for i, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			env[i] = "PATH=" + dir + ":" + v
			return env
		}
	}
	return append(env, "PATH="+dir)
}
