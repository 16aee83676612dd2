package cmd

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
)

type files map[string]string

func (f files) Get(_ context.Context, url, _ string) ([]byte, error) {
	s, ok := f[url]
	if !ok {
		return nil, fs.ErrNotExist
	}
	return []byte(s), nil
}

func newEnv() *modules.Env {
	return (&modules.Env{
		Pillar:   ordered.New(),
		Opts:     ordered.New(),
		Registry: modules.Default,
		Log:      slog.New(slog.NewTextHandler(io.Discard, nil)),
		Files:    files{"salt://scripts/hello.sh": "#!/bin/sh\necho \"hello $1 $2\"\necho oops >&2\nexit 4\n"},
		Context:  map[string]any{},
	}).WithGrains(ordered.FromPairs("os_family", "Debian"))
}

// job marks a call as the job's own, as the thin binary does, so that
// python_shell defaults to True.
func job(kv ...any) *ordered.Map {
	m := ordered.FromPairs(kv...)
	m.Set("__pub_jid", "20260101000000000000")
	return m
}

func call(t *testing.T, fun string, args []any, kwargs *ordered.Map) (any, *modules.Env) {
	t.Helper()
	env := newEnv()
	got, err := env.Run(context.Background(), fun, args, kwargs)
	if err != nil {
		t.Fatalf("%s %v: %v", fun, args, err)
	}
	return got, env
}

func TestRunShapes(t *testing.T) {
	tmp := t.TempDir()
	tests := []struct {
		name    string
		fun     string
		args    []any
		kwargs  *ordered.Map
		want    any
		retcode any
	}{
		{"run merges stderr", "cmd.run", []any{"echo out; echo err >&2"}, job(), "out\nerr", 0},
		{"run sets retcode", "cmd.run", []any{"echo x; exit 3"}, job(), "x", 3},
		{"run ignore_retcode", "cmd.run", []any{"exit 3"}, job("ignore_retcode", true), "", 0},
		{"run rstrip off", "cmd.run", []any{"printf 'a \\n\\n'"}, job("rstrip", false), "a \n\n", 0},
		{"run cwd", "cmd.run", []any{"pwd"}, job("cwd", tmp), tmp, 0},
		{"run env dict", "cmd.run", []any{"echo $FOO-$BAR"}, job("env", ordered.FromPairs("FOO", "x", "BAR", 2)), "x-2", 0},
		{"run env list", "cmd.run", []any{"echo $FOO"}, job("env", []any{ordered.FromPairs("FOO", "y")}), "y", 0},
		{"run locale reset", "cmd.run", []any{"echo $LC_ALL/$LC_CTYPE"}, job(), "/C", 0},
		{"run stdin", "cmd.run", []any{"cat"}, job("stdin", `one\ntwo`), "one\ntwo", 0},
		{"run hide_output", "cmd.run", []any{"echo secret"}, job("hide_output", true), "", 0},
		{"run success_retcodes", "cmd.run", []any{"exit 3"}, job("success_retcodes", []any{3}), "", 0},
		{"run success_stdout", "cmd.run", []any{"echo fine; exit 2"}, job("success_stdout", "fine"), "fine", 0},
		{"run list no shell", "cmd.run", []any{[]any{"echo", "a;b"}}, job(), "a;b", 0},
		{"run python_shell false", "cmd.run", []any{"echo a;b"}, job("python_shell", false), "a;b", 0},
		{"cross-module call has no shell", "cmd.run", []any{"echo 'a b' | x"}, nil, "a b | x", 0},
		{"prepend_path", "cmd.run", []any{"echo $PATH"}, job("prepend_path", "/opt/x/bin", "clean_env", true), "/opt/x/bin:", 0},
		{"shell", "cmd.shell", []any{"echo a && echo b"}, nil, "a\nb", 0},
		{"run_stdout", "cmd.run_stdout", []any{"echo out; echo err >&2"}, job(), "out", 0},
		{"run_stderr", "cmd.run_stderr", []any{"echo out; echo err >&2; exit 1"}, job(), "err", 1},
		{"retcode", "cmd.retcode", []any{"exit 5"}, job(), 5, 5},
		{"umask", "cmd.run", []any{"umask"}, job("umask", "077"), "0077", 0},
		{"which", "cmd.which", []any{"sh"}, nil, "/usr/bin/sh", nil},
		{"which missing", "cmd.which", []any{"no-such-binary-x"}, nil, nil, nil},
		{"has_exec", "cmd.has_exec", []any{"sh"}, nil, true, nil},
		{"which_bin", "cmd.which_bin", []any{[]any{"no-such-x", "sh"}}, nil, "/usr/bin/sh", nil},
		{"exec_code", "cmd.exec_code", []any{"sh", "echo code $0 >/dev/null; echo ran"}, nil, "ran", 0},
	}
	if p, err := filepathLook("sh"); err == nil {
		for i := range tests {
			if tests[i].want == "/usr/bin/sh" {
				tests[i].want = p
			}
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, env := call(t, tt.fun, tt.args, tt.kwargs)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if rc := env.Context["retcode"]; rc != tt.retcode {
				t.Errorf("context retcode = %v, want %v", rc, tt.retcode)
			}
		})
	}
}

func filepathLook(name string) (string, error) {
	return lookPathIn(name, []string{"PATH=" + os.Getenv("PATH")})
}

func TestRunAll(t *testing.T) {
	got, env := call(t, "cmd.run_all", []any{"echo out; echo err >&2; exit 2"}, job())
	m := got.(*ordered.Map)
	if diff := cmp.Diff([]string{"pid", "retcode", "stdout", "stderr"}, m.StringKeys()); diff != "" {
		t.Errorf("keys (-want +got):\n%s", diff)
	}
	if m.Value("retcode") != 2 || m.Value("stdout") != "out" || m.Value("stderr") != "err" || env.Context["retcode"] != 2 {
		t.Errorf("run_all = %v, context %v", m, env.Context)
	}
	if pid, _ := m.Value("pid").(int); pid <= 0 {
		t.Errorf("pid = %v", m.Value("pid"))
	}
	got, _ = call(t, "cmd.run_all", []any{"echo out; echo err >&2"}, job("redirect_stderr", true))
	if m := got.(*ordered.Map); m.Value("stdout") != "out\nerr" || m.Value("stderr") != "" {
		t.Errorf("redirect_stderr run_all = %v", m)
	}
	got, _ = call(t, "cmd.run_all", []any{"echo out; echo err >&2"}, job("hide_output", true))
	if m := got.(*ordered.Map); m.Value("stdout") != "" || m.Value("stderr") != "" {
		t.Errorf("hide_output run_all = %v", m)
	}
}

func TestTimeout(t *testing.T) {
	start := time.Now()
	got, env := call(t, "cmd.run_all", []any{"sleep 5"}, job("timeout", 1))
	if time.Since(start) > 4*time.Second {
		t.Errorf("timeout did not stop the command")
	}
	m := got.(*ordered.Map)
	if m.Value("retcode") != 1 || m.Value("stdout") != "/bin/bash -c sleep 5 : Timed out after 1 seconds" && !strings.HasSuffix(m.Value("stdout").(string), ": Timed out after 1 seconds") {
		t.Errorf("timeout result = %v", m)
	}
	if env.Context["retcode"] != 1 {
		t.Errorf("context retcode = %v", env.Context["retcode"])
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		fun    string
		args   []any
		kwargs *ordered.Map
		want   string
		inv    bool
	}{
		{"cmd.run", []any{"true"}, job("cwd", "relative/dir"), "Specified cwd 'relative/dir' either not absolute or does not exist", false},
		{"cmd.run", []any{"true"}, job("cwd", "/no/such/dir"), "Specified cwd '/no/such/dir' either not absolute or does not exist", false},
		{"cmd.run", []any{"true"}, job("shell", "/no/such/shell"), "The shell /no/such/shell is not available", false},
		{"cmd.run", []any{"true"}, job("runas", "no-such-user-x"), "User 'no-such-user-x' is not available", false},
		{"cmd.run", []any{"true"}, job("umask", "000"), "Zero umask is not allowed.", false},
		{"cmd.run", []any{"true"}, job("umask", "9z"), "Invalid umask: '9z'", false},
		{"cmd.run", []any{"true"}, job("success_retcodes", "a,b"), "success_retcodes must be a list of integers", true},
		{"cmd.run", []any{"exit 2"}, job("raise_err", true), "", false},
		{"cmd.run", []any{"no-such-binary-x arg"}, nil, "Unable to run command '['no-such-binary-x', 'arg']' with the context '{'cwd': '", false},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			_, err := newEnv().Run(context.Background(), tt.fun, tt.args, tt.kwargs)
			var execErr *modules.ExecutionError
			var invErr *modules.InvocationError
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("err = %v, want prefix %q", err, tt.want)
			}
			if tt.inv && !errors.As(err, &invErr) || !tt.inv && !errors.As(err, &execErr) {
				t.Errorf("error type %T", err)
			}
		})
	}
}

func TestScript(t *testing.T) {
	got, env := call(t, "cmd.script", []any{"salt://scripts/hello.sh", "a 'b c'"}, job())
	want := ordered.FromPairs("stdout", "hello a b c", "stderr", "oops", "retcode", 4)
	m := got.(*ordered.Map)
	for _, k := range []string{"stdout", "stderr", "retcode"} {
		if m.Value(k) != want.Value(k) {
			t.Errorf("script %s = %v, want %v", k, m.Value(k), want.Value(k))
		}
	}
	if env.Context["retcode"] != 4 {
		t.Errorf("context retcode = %v", env.Context["retcode"])
	}
	got, _ = call(t, "cmd.script_retcode", []any{"salt://scripts/hello.sh"}, job())
	if got != 4 {
		t.Errorf("script_retcode = %v", got)
	}
	got, _ = call(t, "cmd.script", []any{"salt://missing.sh"}, job())
	if diff := cmp.Diff(`{"pid":0,"retcode":1,"stdout":"","stderr":"","cache_error":true}`, mustJSON(got)); diff != "" {
		t.Errorf("missing script (-want +got):\n%s", diff)
	}
	local := filepath.Join(t.TempDir(), "local.sh")
	if err := os.WriteFile(local, []byte("#!/bin/sh\necho local\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, _ = call(t, "cmd.script", []any{local}, job())
	if got.(*ordered.Map).Value("stdout") != "local" {
		t.Errorf("local script = %v", got)
	}
}

func TestRunBg(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "done")
	got, _ := call(t, "cmd.run_bg", []any{"sleep 0.2; touch " + marker}, job())
	if pid, _ := got.(*ordered.Map).Value("pid").(int); pid <= 0 {
		t.Fatalf("run_bg = %v", got)
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(marker); err == nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Error("background command did not run")
}

func mustJSON(v any) string {
	b, err := v.(*ordered.Map).MarshalJSON()
	if err != nil {
		panic(err)
	}
	return string(b)
}

func TestShellsAndTTY(t *testing.T) {
	f := filepath.Join(t.TempDir(), "shells")
	if err := os.WriteFile(f, []byte("# valid shells\n/bin/sh\n\n  /bin/bash\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]any{"/bin/sh", "/bin/bash"}, shells(f)); diff != "" {
		t.Errorf("shells (-want +got):\n%s", diff)
	}
	got, _ := call(t, "cmd.tty", []any{"lp0", "x"}, nil)
	if diff := cmp.Diff(`{"Error":"The specified device is not a valid TTY"}`, mustJSON(got)); diff != "" {
		t.Errorf("tty (-want +got):\n%s", diff)
	}
}
