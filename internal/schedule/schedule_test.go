package schedule

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
)

type recorder struct {
	mu   sync.Mutex
	runs []Run
	hold chan struct{}
}

func (r *recorder) exec(_ context.Context, run Run) {
	if r.hold != nil {
		<-r.hold
	}
	r.mu.Lock()
	r.runs = append(r.runs, run)
	r.mu.Unlock()
}

func entry(kv ...any) *ordered.Map { return ordered.FromPairs(kv...) }

func TestEvalTiming(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 12, 0, 0, 0, time.Local)
	for _, tc := range []struct {
		name  string
		data  *ordered.Map
		ticks int // seconds evaluated, one per second from t0
		want  int
	}{
		{"seconds", entry("function", "test.ping", "seconds", 2), 7, 3},
		{"run_on_start", entry("function", "test.ping", "minutes", 5, "run_on_start", true), 5, 1},
		{"disabled", entry("function", "test.ping", "seconds", 1, "enabled", false), 5, 0},
		{"cron", entry("function", "test.ping", "cron", "* * * * *"), 121, 2},
		{"once", entry("function", "test.ping", "once", "2026-12-02T12:00:03"), 10, 1},
		{"when", entry("function", "test.ping", "when", []any{"2026-12-02 12:00:02", "12:00:05pm"}), 10, 2},
		{"range out", entry("function", "test.ping", "seconds", 1, "range", entry("start", "1:00pm", "end", "2:00pm")), 5, 0},
		{"range in", entry("function", "test.ping", "seconds", 1, "range", entry("start", "11:00am", "end", "2:00pm")), 5, 4},
		{"range inverted", entry("function", "test.ping", "seconds", 1, "range", entry("start", "11:00am", "end", "2:00pm", "invert", true)), 5, 0},
		{"after", entry("function", "test.ping", "seconds", 1, "after", "2026-12-02 12:00:03"), 6, 2},
		{"until", entry("function", "test.ping", "seconds", 1, "until", "2026-12-02 12:00:03"), 6, 2},
		{"bad cron", entry("function", "test.ping", "cron", "99 * * * *"), 5, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			s := New(Options{Schedule: entry("job1", tc.data), Exec: rec.exec})
			for i := range tc.ticks {
				s.Eval(t.Context(), t0.Add(time.Duration(i)*time.Second))
				s.jobs.Wait()
			}
			if len(rec.runs) != tc.want {
				t.Fatalf("%d runs, want %d", len(rec.runs), tc.want)
			}
		})
	}
}

func TestSplayDelays(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 12, 0, 0, 0, time.Local)
	rec := &recorder{}
	s := New(Options{Schedule: entry("j", entry("function", "test.ping", "seconds", 1, "splay", entry("start", 3, "end", 3))), Exec: rec.exec})
	var first int
	for i := range 10 {
		s.Eval(t.Context(), t0.Add(time.Duration(i)*time.Second))
		s.jobs.Wait()
		if len(rec.runs) == 1 && first == 0 {
			first = i
		}
	}
	if first != 4 {
		t.Fatalf("first run at +%ds, want +4s (1 s interval + 3 s splay)", first)
	}
}

func TestMaxrunning(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 12, 0, 0, 0, time.Local)
	rec := &recorder{hold: make(chan struct{})}
	s := New(Options{Schedule: entry("j", entry("function", "test.sleep", "seconds", 1, "maxrunning", 2)), Exec: rec.exec})
	for i := range 6 {
		s.Eval(t.Context(), t0.Add(time.Duration(i)*time.Second))
	}
	if n := s.Running("j"); n != 2 {
		t.Fatalf("%d running, want maxrunning 2", n)
	}
	close(rec.hold)
	s.jobs.Wait()
	if len(rec.runs) != 2 {
		t.Fatalf("%d runs, want 2", len(rec.runs))
	}
}

func TestRunArgs(t *testing.T) {
	rec := &recorder{}
	s := New(Options{Schedule: entry("j", entry("function", "cmd.run", "args", []any{"echo hi"}, "kwargs", entry("cwd", "/"), "minutes", 1)), Exec: rec.exec})
	if err := s.RunJob(t.Context(), "j"); err != nil {
		t.Fatal(err)
	}
	s.jobs.Wait()
	r := rec.runs[0]
	if r.Fun != "cmd.run" || len(r.Args) != 1 || r.Args[0] != "echo hi" || r.Kwargs.Value("cwd") != "/" || len(r.JID) != 20 {
		t.Fatalf("run %+v", r)
	}
	if err := s.RunJob(t.Context(), "nope"); err == nil {
		t.Fatal("run of a missing job succeeded")
	}
}

func TestManageAndSave(t *testing.T) {
	dir := t.TempDir()
	conf := ConfFile(dir, "minion.d/*.conf")
	s := New(Options{ConfFile: conf, Exec: func(context.Context, Run) {}})
	if err := s.SetPillar(entry("from_pillar", entry("function", "test.ping", "seconds", 10))); err != nil {
		t.Fatal(err)
	}
	if err := s.Add("job1", entry("function", "test.ping", "seconds", 60), true); err != nil {
		t.Fatal(err)
	}
	if err := s.Add("bad", entry("function", "test.ping", "cron", "1 2 3"), true); err == nil || !strings.Contains(err.Error(), "bad") {
		t.Fatalf("bad cron accepted: %v", err)
	}
	if err := s.SetJobEnabled("job1", false, true); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	want := "schedule:\n  job1: {enabled: false, function: test.ping, seconds: 60}\n"
	if string(got) != want {
		t.Fatalf("%s:\n%s\nwant\n%s", filepath.Base(conf), got, want)
	}
	if err := s.Delete("from_pillar", true); err != nil {
		t.Fatal(err)
	}
	if !s.List(Pillar).Has("from_pillar") || s.List(Opts).Has("from_pillar") || !s.List(All).Has("job1") {
		t.Fatalf("lists: %v", s.List(All))
	}
	if err := s.Delete("job1", true); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(conf); string(got) != "schedule: {}\n" {
		t.Fatalf("after delete: %q", got)
	}
	if err := s.SetPillar("x"); err == nil {
		t.Fatal("a string pillar schedule was accepted")
	}
}
