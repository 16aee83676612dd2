package cmd

import (
	"context"
	"errors"
	"os"
	"os/user"
	"strings"
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
)

// TestWindowsShell runs commands through cmd.exe as a job does.
func TestWindowsShell(t *testing.T) {
	host, _ := os.Hostname()
	got, env := call(t, "cmd.run", []any{"echo %COMPUTERNAME%"}, job())
	if !strings.EqualFold(got.(string), host) {
		t.Errorf("echo %%COMPUTERNAME%% = %q, want %q", got, host)
	}
	if env.Context["retcode"] != 0 {
		t.Errorf("retcode = %v", env.Context["retcode"])
	}
	all, _ := call(t, "cmd.run_all", []any{"echo out & echo err 1>&2 & exit 3"}, job())
	m := all.(*ordered.Map)
	if m.Value("retcode") != 3 || m.Value("stdout") != "out" || m.Value("stderr") != "err" {
		t.Errorf("run_all = %v %q %q", m.Value("retcode"), m.Value("stdout"), m.Value("stderr"))
	}
	// Without the shell the program is found on PATH with PATHEXT.
	direct, _ := call(t, "cmd.run", []any{"hostname"}, ordered.New())
	if !strings.EqualFold(direct.(string), host) {
		t.Errorf("hostname = %q, want %q", direct, host)
	}
	if w := which("cmd"); w == nil || !strings.HasSuffix(strings.ToLower(w.(string)), `cmd.exe`) {
		t.Errorf("which cmd = %v", w)
	}
}

func TestWindowsRefusals(t *testing.T) {
	cases := []struct {
		kw   *ordered.Map
		want string
	}{
		{job("shell", "notepad.exe"), "unsupported shell type"},
		{job("shell", "nosuchshell"), "shell binary not found: nosuchshell"},
		{job("runas", currentUser(t)), "without password= is not supported"},
		{job("group", "Users"), "group is not currently available on Windows"},
	}
	for _, c := range cases {
		_, err := newEnv().Run(context.Background(), "cmd.run", []any{"echo x"}, c.kw)
		var ee *modules.ExecutionError
		var ie *modules.InvocationError
		if err == nil || !(errors.As(err, &ee) || errors.As(err, &ie)) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.kw.Keys(), err, c.want)
		}
	}
}

func currentUser(t *testing.T) string {
	u, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	return u.Username
}

// TestWindowsNoGUIWarningInSession: a minion outside a service gets no
// Session 0 warning for a GUI program.
func TestWindowsNoGUIWarningInSession(t *testing.T) {
	got, _ := call(t, "cmd.run_bg", []any{"notepad.exe /?"}, job())
	if got.(*ordered.Map).Has("warnings") {
		t.Errorf("run_bg in a session warned: %v", got.(*ordered.Map).Value("warnings"))
	}
	if pid, _ := got.(*ordered.Map).Value("pid").(int); pid > 0 {
		if p, err := os.FindProcess(pid); err == nil {
			p.Kill()
		}
	}
}
