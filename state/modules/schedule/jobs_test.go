package schedule

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/internal/schedule"
	"github.com/brinesalt/brine/state/modules"
	"github.com/google/go-cmp/cmp"
)

// liveEnv is a minion whose scheduler records the functions it starts.
func liveEnv(t *testing.T) (*modules.Env, *schedule.Schedule, func() []string) {
	e, _ := env(t, false)
	var mu sync.Mutex
	var ran []string
	s := schedule.New(schedule.Options{ConfFile: confFile(&modules.Call{Env: e}), Exec: func(_ context.Context, r schedule.Run) {
		mu.Lock()
		ran = append(ran, r.Fun)
		mu.Unlock()
	}})
	e.Minion = fakeMinion{s}
	e.Pillar = ordered.New()
	e.Log = discard
	return e, s, func() []string { mu.Lock(); defer mu.Unlock(); return slices.Clone(ran) }
}

func TestPostponeSkipAndStatus(t *testing.T) {
	e, s, ran := liveEnv(t)
	t0 := time.Date(2026, 12, 2, 12, 0, 0, 0, time.Local)
	run(t, e, "schedule.add", "job1", "function=test.ping", "minutes=10")
	for _, tc := range []struct {
		fun  string
		args []any
		want string
	}{
		{"schedule.postpone_job", []any{"job1", "2026-12-02T12:00:02", "2026-12-02T12:00:04"}, "{'comment': 'Postponed Job job1 in schedule.', 'result': True}"},
		{"schedule.skip_job", []any{"job1", "2026-12-02T12:00:06"}, "{'comment': 'Added Skip Job job1 in schedule.', 'result': True}"},
		{"schedule.skip_job", []any{"nope", "2026-12-02T12:00:06"}, "{'comment': 'Job nope does not exist.', 'result': False}"},
		{"schedule.postpone_job", []any{"job1", "noon", "2026-12-02T12:00:04"}, "{'comment': 'Date string could not be parsed.', 'result': False}"},
		{"schedule.show_next_fire_time", []any{"job1"}, "{'result': True, 'comment': 'next fire time not available.'}"},
	} {
		if got := py.Repr(run(t, e, tc.fun, tc.args...)); got != tc.want {
			t.Errorf("%s %v = %s\nwant %s", tc.fun, tc.args, got, tc.want)
		}
	}
	for i := range 8 {
		s.Eval(t.Context(), t0.Add(time.Duration(i)*time.Second))
	}
	waitRan(t, ran, 1)
	if got := py.Repr(run(t, e, "schedule.show_next_fire_time", "job1")); got != "{'result': True, 'next_fire_time': '2026-12-02T12:10:00'}" {
		t.Errorf("show_next_fire_time = %s", got)
	}
	st := run(t, e, "schedule.job_status", "job1").(*ordered.Map)
	if st.Value("_last_run") != "2026-12-02T12:00:04" || st.Value("_next_fire_time") != "2026-12-02T12:10:00" || st.Value("function") != "test.ping" {
		t.Errorf("job_status = %s", py.Repr(st))
	}
	if got := py.Repr(run(t, e, "schedule.job_status", "nope")); got != "{}" {
		t.Errorf("job_status of a missing job = %s", got)
	}
	noMinion, _ := env(t, false)
	noMinion.Log = discard
	if got := py.Repr(run(t, noMinion, "schedule.skip_job", "job1", "2026-12-02T12:00:06")); got != "{'comment': 'Event module not available. Schedule skip job failed.', 'result': True}" {
		t.Errorf("skip_job without a minion = %s", got)
	}
}

func waitRan(t *testing.T, ran func() []string, n int) {
	t.Helper()
	for range 1000 {
		if len(ran()) >= n {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("ran %v, want %d runs", ran(), n)
}

func TestReload(t *testing.T) {
	e, s, _ := liveEnv(t)
	dir := filepath.Dir(confFile(&modules.Call{Env: e}))
	if got := py.Repr(run(t, e, "schedule.reload")); got != "{'comment': [], 'result': True}" {
		t.Errorf("reload without a file = %s", got)
	}
	os.MkdirAll(dir, 0o700)
	os.WriteFile(filepath.Join(dir, "schedule.conf"), []byte("schedule: {}\n"), 0o600)
	if got := py.Repr(run(t, e, "schedule.reload")); got != "{'comment': ['Failed to reload schedule on minion.  Saved file is empty or invalid.'], 'result': False}" {
		t.Errorf("reload of an empty file = %s", got)
	}
	os.WriteFile(filepath.Join(dir, "schedule.conf"), []byte("schedule:\n  saved:\n    function: test.ping\n    seconds: 5\n"), 0o600)
	e.Pillar = ordered.FromPairs("schedule", ordered.New())
	if got := py.Repr(run(t, e, "schedule.reload")); got != "{'comment': ['Reloaded schedule from pillar on minion.', 'Reloaded schedule on minion from schedule.conf.'], 'result': True}" {
		t.Errorf("reload = %s", got)
	}
	if !s.List(schedule.Opts).Has("saved") {
		t.Error("the reloaded job is not in the schedule")
	}
}

func TestCopyAndMove(t *testing.T) {
	e, s, _ := liveEnv(t)
	reg := modules.Default.CloneWithout("")
	var published []any
	reg.Register(modules.Function{Name: "publish.publish", Spec: modules.Spec{VarArgs: true, VarKw: true}, Fn: func(_ context.Context, c *modules.Call) (any, error) {
		published = c.VarArgs
		if c.VarArgs[0] == "nobody" {
			return ordered.New(), nil
		}
		return ordered.FromPairs("web2", ordered.FromPairs("result", true)), nil
	}})
	e.Registry = reg
	run(t, e, "schedule.add", "job1", "function=test.ping", "seconds=10")
	got := py.Repr(run(t, e, "schedule.copy", "job1", "web2"))
	if got != "{'comment': 'Copied Job job1 from schedule to minion(s).', 'result': True, 'minions': ['web2']}" {
		t.Errorf("copy = %s", got)
	}
	want := []any{"web2", "schedule.add", []any{"function=test.ping", "seconds=10", "maxrunning=1", "name=job1", "enabled=True", "jid_include=True"}}
	if d := cmp.Diff(want, published); d != "" {
		t.Errorf("published (-want +got):\n%s", d)
	}
	if got := py.Repr(run(t, e, "schedule.move", "job1", "nobody")); got != "{'comment': 'no servers answered the published schedule.add command', 'result': True}" {
		t.Errorf("move to nobody = %s", got)
	}
	if got := py.Repr(run(t, e, "schedule.move", "job1", "web2")); got != "{'comment': 'Moved Job job1 from schedule.', 'result': True, 'minions': ['web2']}" {
		t.Errorf("move = %s", got)
	}
	if s.List(schedule.Opts).Has("job1") {
		t.Error("a moved job is still here")
	}
	if got := py.Repr(run(t, e, "schedule.move", "job1", "web2", "test=True")); got != "{'comment': 'Job: job1 would be moved from schedule.', 'result': True}" {
		t.Errorf("move test = %s", got)
	}
}

var discard = slog.New(slog.DiscardHandler)
