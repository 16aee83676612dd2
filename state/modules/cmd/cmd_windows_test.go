package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

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

// TestMain makes this test binary a fake powershell.exe when it runs
// under that name: it prints its arguments as JSON, so a test sees the
// command line cmd.run built (Debian's Wine has no PowerShell; its
// powershell.exe is a stub). As echoenv.exe it prints its arguments
// and its environment.
func TestMain(m *testing.M) {
	switch strings.ToLower(filepath.Base(os.Args[0])) {
	case "powershell.exe":
		b, _ := json.Marshal(os.Args[1:])
		fmt.Println(string(b))
		os.Exit(0)
	case "echoenv.exe":
		b, _ := json.Marshal(append(os.Args[1:], os.Environ()...))
		fmt.Println(string(b))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestWindowsPowerShell: shell=powershell runs Salt's command line
// (cmdmod._prep_powershell_cmd) — checked with a fake powershell.exe
// found on PATH — and a PowerShell missing from PATH is an error.
func TestWindowsPowerShell(t *testing.T) {
	dir := filepath.Dir(fake(t, "powershell.exe"))
	script := filepath.Join(dir, "task.ps1")
	os.WriteFile(script, []byte("param($Name)\r\nWrite-Output $Name\r\n"), 0o644)
	t.Setenv("PATH", dir)
	pre := []string{"-NonInteractive", "-NoProfile", "-ExecutionPolicy", "Bypass"}
	cases := []struct {
		name string
		fun  string
		args []any
		kw   *ordered.Map
		want []string
	}{
		{"command", "cmd.run", []any{"Write-Output 'hi there'"}, job("shell", "powershell"),
			append(pre, "-Command", "Write-Output 'hi there'")},
		{"python_shell=False", "cmd.run", []any{"Get-Item C:\\"}, job("shell", "powershell", "python_shell", false),
			append(pre, "-Command", `Get-Item C:\`)},
		{"list joined", "cmd.run", []any{[]any{"Get-Item", `C:\`}}, job("shell", "powershell"),
			append(pre, "-Command", `Get-Item C:\`)},
		{"encoded_cmd", "cmd.run", []any{"VwByAGkAdABlAC0ATwB1AHQAcAB1AHQAIAAxAA=="}, job("shell", "powershell", "encoded_cmd", true),
			append(pre, "-EncodedCommand", "VwByAGkAdABlAC0ATwB1AHQAcAB1AHQAIAAxAA==")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, _ := call(t, c.fun, c.args, c.kw)
			var argv []string
			if err := json.Unmarshal([]byte(got.(string)), &argv); err != nil {
				t.Fatalf("output %q: %v", got, err)
			}
			if d := cmp.Diff(c.want, argv); d != "" {
				t.Errorf("powershell argv (-want +got):\n%s", d)
			}
		})
	}
	t.Run("script", func(t *testing.T) {
		got, _ := call(t, "cmd.script", []any{script}, job("shell", "powershell", "args", "-Name brine"))
		var argv []string
		out := got.(*ordered.Map).Value("stdout").(string)
		if err := json.Unmarshal([]byte(out), &argv); err != nil {
			t.Fatalf("output %q: %v", out, err)
		}
		if len(argv) != 8 || argv[4] != "-File" || !strings.HasSuffix(argv[5], ".ps1") ||
			cmp.Diff(pre, argv[:4]) != "" || cmp.Diff([]string{"-Name", "brine"}, argv[6:]) != "" {
			t.Errorf("cmd.script powershell argv = %q, want %q -File <copy of task.ps1> -Name brine", argv, pre)
		}
	})
	t.Run("missing", func(t *testing.T) {
		t.Setenv("PATH", scratchDir(t))
		_, err := newEnv().Run(context.Background(), "cmd.run", []any{"Write-Output 1"}, job("shell", "powershell"))
		var ee *modules.ExecutionError
		if !errors.As(err, &ee) || !strings.Contains(err.Error(), "shell binary not found: powershell") {
			t.Errorf("cmd.run shell=powershell without PowerShell: %v", err)
		}
	})
}

// fake copies this test binary into a temporary directory as name.
func fake(t *testing.T, name string) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(scratchDir(t), name)
	if err := os.WriteFile(path, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestWindowsRunasPassword: runas= with password= for an account that
// does not exist is an error that does not show the password; for the
// minion's own account the logon gives a token and the password is in
// neither the command line, nor the environment the child gets, nor the
// job's error. Under Wine the logon proves nothing: Wine 8.0's LogonUserW
// is a stub that ignores the credentials and returns the dummy handle
// 0xdeadbeef, so any password "logs on", and CreateProcessAsUser with
// that handle fails ("Invalid handle"); the job then fails with that
// error. A wrong password, and what the token lets the child do, are
// not tested here (docs/WINDOWS.md).
func TestWindowsRunasPassword(t *testing.T) {
	const secret = "Brine-S3cret-pw"
	_, err := newEnv().Run(context.Background(), "cmd.run", []any{"echo x"},
		job("runas", "brine-no-such-user", "password", secret))
	var ee *modules.ExecutionError
	if !errors.As(err, &ee) || strings.Contains(err.Error(), secret) {
		t.Errorf("runas a missing user: %v, want an execution error without the password", err)
	}
	echo := fake(t, "echoenv.exe")
	c := &modules.Call{Env: newEnv(), Kwargs: ordered.New(), Pub: job(), Args: map[string]any{
		"cmd": []any{echo, "arg1"}, "runas": currentUser(t), "password": secret, "python_shell": false}}
	p, err := prepare(c)
	if err != nil {
		t.Fatalf("prepare runas the current user with a password: %v", err)
	}
	if p.cred == nil {
		t.Error("runas with a password gave no logon token")
	}
	for _, s := range append(append([]string{p.cmdline}, p.argv...), p.env...) {
		if strings.Contains(s, secret) {
			t.Errorf("the password is in the child's command line or environment: %q", s)
		}
	}
	got, err := newEnv().Run(context.Background(), "cmd.run", []any{[]any{echo, "arg1"}},
		job("runas", currentUser(t), "password", secret, "python_shell", false))
	if err != nil {
		if !errors.As(err, &ee) || strings.Contains(err.Error(), secret) {
			t.Errorf("runas job error %v: want an execution error without the password", err)
		}
		t.Logf("runas with a password did not start the command (under Wine: its LogonUserW stub's dummy token): %v", err)
		return
	}
	if strings.Contains(got.(string), secret) || !strings.HasPrefix(got.(string), `["arg1"`) {
		t.Errorf("runas child saw %q, want arg1 first and no password", got)
	}
}

// scratchDir is a new temporary directory, removed after the test as
// far as the system lets it: not t.TempDir, whose cleanup fails the test
// under Wine 8.0, where Go's os.RemoveAll gets "Invalid function" (Wine
// does not answer FileDispositionInformationEx as Go expects).
func scratchDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "brine-cmd-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}
