// Package pkgtest holds test fixtures for the pkg, service, user and group
// modules: a fake syscmd.Runner that answers commands with scripted tool
// output and records what was run, so that a test states the facts of a
// host and asserts the commands a call runs.
package pkgtest

import (
	"context"
	"strings"
	"sync"

	"github.com/brinesalt/brine/state/modules/pkg/syscmd"
)

// Rule answers a command. Cmd is matched against the command line (the
// arguments joined by single spaces, without the environment) with
// Glob, so "dpkg-query *" matches any dpkg-query call. A rule with
// Once set answers one call and is then spent, which lets a test script
// the "before" and "after" output of the same command.
type Rule struct {
	Cmd  string
	Out  syscmd.Result
	Once bool
	used bool
}

// Fake is a scripted Runner. Commands no rule matches succeed with no
// output.
type Fake struct {
	mu    sync.Mutex
	Rules []*Rule
	Calls []syscmd.Cmd
}

// On adds a rule answering cmd with stdout and retcode.
func (f *Fake) On(cmd string, retcode int, stdout string) *Fake {
	f.Rules = append(f.Rules, &Rule{Cmd: cmd, Out: syscmd.Result{Retcode: retcode, Stdout: stdout}})
	return f
}

// Once adds a rule answering the next call of cmd only.
func (f *Fake) Once(cmd string, retcode int, stdout string) *Fake {
	f.Rules = append(f.Rules, &Rule{Cmd: cmd, Out: syscmd.Result{Retcode: retcode, Stdout: stdout}, Once: true})
	return f
}

// Fail adds a rule answering cmd with a failure and stderr.
func (f *Fake) Fail(cmd string, retcode int, stderr string) *Fake {
	f.Rules = append(f.Rules, &Rule{Cmd: cmd, Out: syscmd.Result{Retcode: retcode, Stderr: stderr}})
	return f
}

// Run is the syscmd.Runner.
func (f *Fake) Run(_ context.Context, c syscmd.Cmd) (syscmd.Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.Calls = append(f.Calls, c)
	line := strings.Join(c.Args, " ")
	for _, r := range f.Rules {
		if r.used {
			continue
		}
		if Glob(r.Cmd, line) {
			if r.Once {
				r.used = true
			}
			return r.Out, nil
		}
	}
	return syscmd.Result{}, nil
}

// Lines returns the recorded command lines, arguments only.
func (f *Fake) Lines() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.Calls) == 0 {
		return nil
	}
	out := make([]string, len(f.Calls))
	for i, c := range f.Calls {
		out[i] = strings.Join(c.Args, " ")
	}
	return out
}

// Changing returns the recorded command lines that are not read-only
// queries, judged by the given prefixes: the commands that would change
// the host.
func (f *Fake) Changing(queries ...string) []string {
	var out []string
	for _, l := range f.Lines() {
		q := false
		for _, p := range queries {
			if strings.HasPrefix(l, p) {
				q = true
				break
			}
		}
		if !q {
			out = append(out, l)
		}
	}
	return out
}

// Glob reports whether s matches pattern, where each * stands for any
// run of characters (slashes and spaces included) and nothing else is
// special.
func Glob(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == s
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return strings.HasSuffix(s, parts[len(parts)-1])
}
