package cron

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/testsupport/testhosts"
	"github.com/brinesalt/brine/state/modules"
)

func js(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func fixture(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("testdata/crontab")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// spoolRunner is a crontab(1) stand-in keeping each user's crontab in
// dir: -l prints it (or fails as Vixie cron does), a path installs it.
func spoolRunner(dir string, calls *[]string) Runner {
	return func(_ context.Context, argv []string) (Result, error) {
		*calls = append(*calls, strings.Join(argv, " "))
		usr, args := "root", argv[1:]
		if len(args) >= 2 && args[0] == "-u" {
			usr, args = args[1], args[2:]
		}
		spool := filepath.Join(dir, usr)
		if len(args) == 1 && args[0] == "-l" {
			b, err := os.ReadFile(spool)
			if err != nil {
				return Result{Retcode: 1, Stderr: "no crontab for " + usr}, nil
			}
			return Result{Stdout: string(b)}, nil
		}
		b, err := os.ReadFile(args[0])
		if err != nil {
			return Result{}, err
		}
		if strings.Contains(string(b), "BAD") {
			return Result{Retcode: 1, Stderr: "errors in crontab file, can't install"}, nil
		}
		return Result{}, os.WriteFile(spool, b, 0o600)
	}
}

func fakeCrontab(t *testing.T, euid int) (*modules.Env, string, *[]string) {
	t.Helper()
	dir := t.TempDir()
	calls := &[]string{}
	ct := &crontab{run: spoolRunner(dir, calls), available: func() bool { return true }, euid: func() int { return euid },
		uid: func(name string) (int, error) {
			switch name {
			case "root":
				return 0, nil
			case "alice":
				return 1000, nil
			case "bob":
				return 1001, nil
			}
			return 0, fmt.Errorf("no user %s", name)
		}, tempDir: t.TempDir()}
	r := modules.NewRegistry()
	register(r, ct)
	env := (&modules.Env{Pillar: ordered.New(), Opts: ordered.New(), Registry: r,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Context: map[string]any{}}).WithGrains(ordered.New())
	return env, dir, calls
}

func TestListTab(t *testing.T) {
	got := Parse(strings.SplitN(fixture(t), "\n", 4)[3]).Value()
	want := `{"pre":["MAILTO=root","0 5 * * * /usr/local/bin/unmanaged"],` +
		`"crons":[{"minute":"15","hour":"2","daymonth":"*","month":"*","dayweek":"1","identifier":"logrotate","cmd":"/usr/sbin/logrotate  -f","comment":"rotate the logs","commented":false},` +
		`{"minute":"*/5","hour":"*","daymonth":"*","month":"*","dayweek":"*","identifier":null,"cmd":"/bin/true","comment":null,"commented":true}],` +
		`"special":[{"spec":"@reboot","cmd":"/usr/bin/start-things --now","identifier":null,"comment":"first\nsecond","commented":false},` +
		`{"spec":"@daily","cmd":"/bin/daily","identifier":null,"comment":null,"commented":true}],` +
		`"env":[{"name":"PATH","value":"/usr/bin:/bin"},{"name":"EMPTY","value":"\"\""}]}`
	if diff := cmp.Diff(want, js(t, got)); diff != "" {
		t.Error(diff)
	}
}

func TestRenderRoundTrip(t *testing.T) {
	tab := Parse(strings.SplitN(fixture(t), "\n", 4)[3])
	again := Parse(tab.Render())
	if diff := cmp.Diff(js(t, tab.Value()), js(t, again.Value())); diff != "" {
		t.Error(diff)
	}
}

func run(t *testing.T, env *modules.Env, fun string, args []any, kwargs *ordered.Map) any {
	t.Helper()
	got, err := env.Run(context.Background(), fun, args, kwargs)
	if err != nil {
		t.Fatalf("%s %v: %v", fun, args, err)
	}
	return got
}

func TestEditing(t *testing.T) {
	env, dir, calls := fakeCrontab(t, 0)
	if err := os.WriteFile(filepath.Join(dir, "alice"), []byte(fixture(t)), 0o600); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		fun    string
		args   []any
		kwargs *ordered.Map
		want   any
	}{
		{"cron.raw_cron", []any{"bob"}, nil, nil},
		{"cron.set_job", []any{"alice", 15, 2, "*", "*", 1, "/usr/sbin/logrotate  -f"}, ordered.FromPairs("identifier", "logrotate", "comment", "rotate the logs"), "present"},
		{"cron.set_job", []any{"alice", 30, 2, "*", "*", 1, "/usr/sbin/logrotate -f"}, ordered.FromPairs("identifier", "logrotate"), "updated"},
		{"cron.set_job", []any{"alice", "0", "*/2", "*", "*", "*", "/bin/backup"}, nil, "new"},
		// Without an identifier Salt's own comparison (identifier None
		// against "NO ID SET") always finds a change.
		{"cron.set_job", []any{"alice", "0", "*/2", "*", "*", "*", "/bin/backup"}, nil, "updated"},
		{"cron.set_job", []any{"alice", "0", "*/2", "*", "*", "*", "/bin/backup"}, ordered.FromPairs("commented", true), "updated"},
		{"cron.rm_job", []any{"alice", "/bin/backup"}, ordered.FromPairs("minute", "5"), "absent"},
		{"cron.rm_job", []any{"alice", "/bin/backup"}, ordered.FromPairs("minute", "0"), "removed"},
		{"cron.set_special", []any{"alice", "@hourly", "/bin/tick"}, ordered.FromPairs("identifier", "tick"), "new"},
		{"cron.set_special", []any{"alice", "@daily", "/bin/tick"}, ordered.FromPairs("identifier", "tick"), "updated"},
		{"cron.rm_special", []any{"alice", "/bin/nothing"}, nil, "absent"},
		{"cron.set_env", []any{"alice", "MAILTO", "ops@example.com"}, nil, "new"},
		{"cron.set_env", []any{"alice", "MAILTO", "ops@example.com"}, nil, "present"},
		{"cron.set_env", []any{"alice", "PATH", "/bin"}, nil, "updated"},
		{"cron.rm_env", []any{"alice", "EMPTY"}, nil, "removed"},
		{"cron.rm_env", []any{"alice", "EMPTY"}, nil, "absent"},
		{"cron.set_job", []any{"alice", "1", "1", "1", "1", "1", "BAD"}, nil, "errors in crontab file, can't install"},
	}
	for _, s := range steps {
		got := run(t, env, s.fun, s.args, s.kwargs)
		if s.want != nil && got != s.want {
			t.Errorf("%s %v %v = %v, want %v", s.fun, s.args, s.kwargs, got, s.want)
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, "alice"))
	want := `MAILTO=root
0 5 * * * /usr/local/bin/unmanaged
# Lines below here are managed by Salt, do not edit
MAILTO=ops@example.com
PATH=/bin
#DISABLED#*/5 * * * * /bin/true
# rotate the logs SALT_CRON_IDENTIFIER:logrotate
30 2 * * 1 /usr/sbin/logrotate -f
# first
# second
@reboot /usr/bin/start-things --now
#DISABLED#@daily /bin/daily
# SALT_CRON_IDENTIFIER:tick
@daily /bin/tick
`
	if diff := cmp.Diff(want, string(b)); diff != "" {
		t.Error(diff)
	}
	if (*calls)[0] != "crontab -u bob -l" {
		t.Errorf("first call = %q", (*calls)[0])
	}
	entry := run(t, env, "cron.get_entry", []any{"alice"}, ordered.FromPairs("identifier", "tick"))
	if js(t, entry) != `{"spec":"@daily","cmd":"/bin/tick","identifier":"tick","comment":"","commented":false}` {
		t.Errorf("get_entry = %s", js(t, entry))
	}
	if got := run(t, env, "cron.get_entry", []any{"alice"}, ordered.FromPairs("cmd", "/nope")); got != false {
		t.Errorf("get_entry missing = %v", got)
	}
}

func TestRandomTimes(t *testing.T) {
	env, dir, _ := fakeCrontab(t, 1000)
	id := ordered.FromPairs("identifier", "r")
	if got := run(t, env, "cron.set_job", []any{"alice", "random", "2:4", "random", "*", "*", "/bin/r"}, id); got != "new" {
		t.Fatalf("set_job = %v", got)
	}
	tab := Parse(readFile(t, filepath.Join(dir, "root")))
	c := tab.Crons[0]
	if m := c.Value("minute").(string); m == "random" || m == "*" {
		t.Errorf("minute = %q", m)
	}
	if h := c.Value("hour"); h != "2" && h != "3" && h != "4" {
		t.Errorf("hour = %v", h)
	}
	if got := run(t, env, "cron.set_job", []any{"alice", "random", c.Value("hour"), "random", "*", "*", "/bin/r"}, id); got != "present" {
		t.Errorf("random against a fixed minute = %v", got)
	}
	if _, err := env.Run(context.Background(), "cron.list_tab", []any{"root"}, nil); err == nil {
		t.Error("non-root managed another user's crontab")
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestExecRunner drives the real command path: a crontab script on the
// PATH that keeps its spool in a temporary directory.
func TestExecRunner(t *testing.T) {
	bin, spool := t.TempDir(), t.TempDir()
	script := `#!/bin/sh
user=$(id -un)
if [ "$1" = "-u" ]; then user=$2; shift 2; fi
if [ "$1" = "-l" ]; then
  if [ -f "` + spool + `/$user" ]; then cat "` + spool + `/$user"; exit 0; fi
  echo "no crontab for $user" >&2; exit 1
fi
cp "$1" "` + spool + `/$user"
`
	if err := os.WriteFile(filepath.Join(bin, "crontab"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	ct := *live
	ct.tempDir = t.TempDir()
	r := modules.NewRegistry()
	register(r, &ct)
	env := (&modules.Env{Pillar: ordered.New(), Opts: ordered.New(), Registry: r,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Context: map[string]any{}}).WithGrains(ordered.New())
	me := currentUser(t)
	if got := run(t, env, "cron.set_job", []any{me, "5", "4", "*", "*", "*", "/bin/echo hi"}, nil); got != "new" {
		t.Fatalf("set_job = %v", got)
	}
	if got := readFile(t, filepath.Join(spool, me)); got != Tag+"5 4 * * * /bin/echo hi\n" {
		t.Errorf("spool = %q", got)
	}
	tab := run(t, env, "cron.list_tab", []any{me}, nil)
	if n := len(tab.(*ordered.Map).Value("crons").([]any)); n != 1 {
		t.Errorf("crons = %d", n)
	}
	if got := run(t, env, "cron.raw_cron", []any{me}, nil); got != Tag+"5 4 * * * /bin/echo hi\n" {
		t.Errorf("raw_cron = %q", got)
	}
}

func currentUser(t *testing.T) string {
	u, err := lookupName(os.Geteuid())
	if err != nil {
		testhosts.Skip(t, "no user name for this uid: "+err.Error())
	}
	return u
}

func FuzzParse(f *testing.F) {
	b, _ := os.ReadFile("testdata/crontab")
	f.Add(string(b))
	f.Add(Tag + "#DISABLED#@x\n# a SALT_CRON_IDENTIFIER:\nA=B C\n1 2 3 4 5 6\n")
	f.Fuzz(func(t *testing.T, s string) {
		tab := Parse(s)
		tab.Render()
	})
}
