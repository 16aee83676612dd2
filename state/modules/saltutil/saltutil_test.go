package saltutil

import (
	"context"
	"encoding/json"
	"errors"
	_ "github.com/brinesalt/brine/state/coregrains/grainsyaml" // grains files and custom grain output
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/fileclient"
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

func write(t *testing.T, p, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

func TestLoadCustomGrains(t *testing.T) {
	dir := t.TempDir()
	write(t, dir+"/10-json", "#!/bin/sh\necho '{\"rack\": \"r1\", \"roles\": [\"web\"]}'\n", 0o755)
	write(t, dir+"/20-yaml", "#!/bin/sh\nprintf 'rack: r2\\nsecure: yes\\n'\n", 0o755)
	write(t, dir+"/30-list", "#!/bin/sh\necho '[1, 2]'\n", 0o755)
	write(t, dir+"/40-fail", "#!/bin/sh\necho boom >&2\nexit 3\n", 0o755)
	write(t, dir+"/50-plain", "rack: nope\n", 0o644)
	write(t, dir+"/60-empty", "#!/bin/sh\n", 0o755)
	got, err := LoadCustomGrains(context.Background(), dir)
	if diff := cmp.Diff(`{"rack":"r2","roles":["web"],"secure":true}`, js(t, got)); diff != "" {
		t.Error(diff)
	}
	if err == nil || !strings.Contains(err.Error(), "30-list") || !strings.Contains(err.Error(), "boom") {
		t.Errorf("err = %v", err)
	}
	if m, err := LoadCustomGrains(context.Background(), dir+"/missing"); err != nil || m.Len() != 0 {
		t.Errorf("missing dir = %v, %v", m, err)
	}

	slow := t.TempDir()
	write(t, slow+"/sleepy", "#!/bin/sh\nsleep 5\n", 0o755)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := LoadCustomGrains(ctx, slow); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("slow grain err = %v", err)
	}
	if time.Since(start) > 4*time.Second {
		t.Error("slow grain was not stopped")
	}
}

func newEnv(t *testing.T) (*modules.Env, string) {
	t.Helper()
	roots := t.TempDir()
	cache := t.TempDir()
	env := (&modules.Env{
		Pillar:   ordered.New(),
		Opts:     ordered.FromPairs("cachedir", cache, "file_client", "local"),
		Registry: modules.Default, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Context: map[string]any{ContextKey: NewJobRegistry()},
		Files:   fileclient.New(map[string][]string{"base": {roots}}, nil),
	}).WithGrains(ordered.New())
	return env, roots
}

func run(t *testing.T, env *modules.Env, fun string, args []any, kw *ordered.Map) any {
	t.Helper()
	got, err := env.Run(context.Background(), fun, args, kw)
	if err != nil {
		t.Fatalf("%s: %v", fun, err)
	}
	return got
}

func TestSyncGrains(t *testing.T) {
	env, roots := newEnv(t)
	write(t, roots+"/_grains/rack.sh", "#!/bin/sh\necho '{\"rack\": \"r7\"}'\n", 0o644)
	write(t, roots+"/_grains/sub/zone.sh", "#!/bin/sh\necho 'zone: z1'\n", 0o644)
	write(t, roots+"/_modules/custom.py", "def f(): pass\n", 0o644)
	cache := env.Opts.Value("cachedir").(string)
	os.WriteFile(filepath.Join(cache, "grains.cache.json"), []byte("{}"), 0o600)

	if got := js(t, run(t, env, "saltutil.sync_grains", nil, nil)); got != `["grains.rack","grains.sub.zone"]` {
		t.Errorf("first sync = %s", got)
	}
	if _, err := os.Stat(filepath.Join(cache, "grains.cache.json")); err == nil {
		t.Error("grains cache not dropped")
	}
	if got := js(t, run(t, env, "saltutil.sync_grains", nil, nil)); got != `[]` {
		t.Errorf("second sync = %s", got)
	}
	dir := GrainsDir(env.Opts)
	if dir != filepath.Join(cache, "extmods/grains") {
		t.Errorf("GrainsDir = %s", dir)
	}
	g, err := LoadCustomGrains(context.Background(), dir)
	if err != nil || js(t, g) != `{"rack":"r7"}` {
		t.Errorf("loaded = %s, %v", js(t, g), err)
	}
	write(t, roots+"/_grains/rack.sh", "#!/bin/sh\necho '{\"rack\": \"r8\"}'\n", 0o644)
	os.Remove(roots + "/_grains/sub/zone.sh")
	if got := js(t, run(t, env, "saltutil.sync_grains", nil, ordered.FromPairs("extmod_blacklist", "nothing"))); got != `["grains.rack"]` {
		t.Errorf("changed sync = %s", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "sub")); err == nil {
		t.Error("removed grain directory kept (clean_dynamic_modules)")
	}
	if got := js(t, run(t, env, "saltutil.sync_grains", nil, ordered.FromPairs("extmod_whitelist", "other"))); got != `[]` {
		t.Errorf("whitelisted sync = %s", got)
	}
	all := run(t, env, "saltutil.sync_all", nil, nil).(*ordered.Map)
	want := []string{"clouds", "beacons", "modules", "states", "sdb", "grains", "renderers", "returners", "output", "utils",
		"log_handlers", "executors", "proxymodules", "engines", "thorium", "serializers", "matchers", "pillar"}
	if diff := cmp.Diff(want, all.StringKeys()); diff != "" {
		t.Error(diff)
	}
	if got := js(t, run(t, env, "saltutil.sync_modules", nil, nil)); got != `[]` {
		t.Errorf("sync_modules = %s", got)
	}
	if got := js(t, run(t, env, "saltutil.list_extmods", nil, nil)); got != `{"grains":["grains.rack"]}` {
		t.Errorf("list_extmods = %s", got)
	}
}

func TestJobs(t *testing.T) {
	env, _ := newEnv(t)
	reg := env.Context[ContextKey].(*JobRegistry)
	ctx, cancel := context.WithCancelCause(context.Background())
	done := reg.Add(Job{JID: "20260101000000000001", Fun: "test.sleep", Arg: []any{30}, Tgt: "m1", User: "root", Cancel: cancel})
	defer done()
	want := `[{"arg":[30],"fun":"test.sleep","jid":"20260101000000000001","pid":` + itoa(os.Getpid()) + `,"ret":"","tgt":"m1","tgt_type":"glob","user":"root"}]`
	if got := js(t, run(t, env, "saltutil.running", nil, nil)); got != want {
		t.Errorf("running = %s", got)
	}
	if got := js(t, run(t, env, "saltutil.is_running", []any{"test.*"}, nil)); got != want {
		t.Errorf("is_running = %s", got)
	}
	if got := js(t, run(t, env, "saltutil.find_job", []any{"nope"}, nil)); got != `{}` {
		t.Errorf("find_job missing = %s", got)
	}
	if got := run(t, env, "saltutil.term_job", []any{"20260101000000000001"}, nil); !strings.HasPrefix(got.(string), "Signal 15 sent to job") {
		t.Errorf("term_job = %v", got)
	}
	if !errors.Is(context.Cause(ctx), ErrSignalled) {
		t.Errorf("cause = %v", context.Cause(ctx))
	}

	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	reg.Add(Job{JID: "2", Fun: "cmd.run", Pid: cmd.Process.Pid})
	if got := run(t, env, "saltutil.signal_job", []any{"2", "SIGKILL"}, nil); got != "Signal 9 sent to job 2 at pid "+itoa(cmd.Process.Pid) {
		t.Errorf("signal_job = %v", got)
	}
	select {
	case <-waited:
	case <-time.After(10 * time.Second):
		t.Fatal("process not killed")
	}
	if got := run(t, env, "saltutil.kill_job", []any{"2"}, nil); got != "Job 2 was not running and job data has been cleaned up" {
		t.Errorf("kill_job dead = %v", got)
	}
	if _, ok := reg.Find("2"); ok {
		t.Error("dead job still registered")
	}
	if got := run(t, env, "saltutil.kill_job", []any{"3"}, nil); got != "" {
		t.Errorf("kill_job unknown = %v", got)
	}
	if _, err := env.Run(context.Background(), "saltutil.signal_job", []any{"1", "SIGBOGUS"}, nil); err == nil {
		t.Error("bogus signal accepted")
	}
}

func TestCaches(t *testing.T) {
	env, _ := newEnv(t)
	cache := env.Opts.Value("cachedir").(string)
	old := filepath.Join(cache, "minion_jobs", "old")
	fresh := filepath.Join(cache, "minion_jobs", "fresh")
	write(t, old+"/return.p", "x", 0o600)
	write(t, fresh+"/return.p", "x", 0o600)
	past := time.Now().Add(-48 * time.Hour)
	os.Chtimes(old, past, past)
	if got := run(t, env, "saltutil.clear_job_cache", nil, nil); got != true {
		t.Errorf("clear_job_cache = %v", got)
	}
	if _, err := os.Stat(old); err == nil {
		t.Error("old job dir kept")
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Error("fresh job dir removed")
	}
	write(t, cache+"/files/base/a", "x", 0o600)
	if got := run(t, env, "saltutil.clear_cache", nil, nil); got != true {
		t.Errorf("clear_cache = %v", got)
	}
	if _, err := os.Stat(cache + "/files/base/a"); err == nil {
		t.Error("cache file kept")
	}
}
