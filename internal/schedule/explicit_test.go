package schedule

import (
	"slices"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
)

// ticks evaluates a schedule once a second from t0 for n seconds and
// returns the seconds (offsets from t0) at which a job started, with
// its function.
func ticks(t *testing.T, sched *ordered.Map, t0 time.Time, n int) ([]int, []string) {
	t.Helper()
	rec := &recorder{}
	s := New(Options{Schedule: sched, Exec: rec.exec})
	var at []int
	for i := range n {
		before := len(rec.runs)
		s.Eval(t.Context(), t0.Add(time.Duration(i)*time.Second))
		s.jobs.Wait()
		if len(rec.runs) > before {
			at = append(at, i)
		}
	}
	var funs []string
	for _, r := range rec.runs {
		funs = append(funs, r.Fun)
	}
	return at, funs
}

func explicit(times ...string) []any {
	out := []any{}
	for _, tm := range times {
		out = append(out, entry("time", tm, "time_fmt", "%Y-%m-%dT%H:%M:%S"))
	}
	return out
}

func TestExplicitAndSkipRanges(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 12, 0, 0, 0, time.Local)
	ping := func(kv ...any) *ordered.Map {
		return entry(append([]any{"function", "test.ping"}, kv...)...)
	}
	for _, tc := range []struct {
		name     string
		sched    *ordered.Map
		n        int
		wantAt   []int
		wantFuns []string
	}{
		// run_explicit adds runs to the job's own timing (Salt handles it
		// before the timing elements, which a job still needs).
		{"run_explicit", entry("j", ping("minutes", 10, "run_explicit", explicit("2026-12-02T12:00:03", "2026-12-02T12:00:07"))), 10, []int{3, 7}, nil},
		{"run_explicit default format", entry("j", ping("minutes", 10, "run_explicit", []any{entry("time", "2026-12-02T12:00:02")})), 5, []int{2}, nil},
		{"skip_explicit", entry("j", ping("seconds", 2, "skip_explicit", explicit("2026-12-02T12:00:04"))), 9, []int{2, 6, 8}, nil},
		{"skip_explicit with skip_function", entry("skip_function", "test.echo", "j", ping("seconds", 2, "skip_explicit", explicit("2026-12-02T12:00:04"))), 7,
			[]int{2, 4, 6}, []string{"test.ping", "test.echo", "test.ping"}},
		{"skip_during_range", entry("j", ping("seconds", 1, "skip_during_range", entry("start", "2026-12-02 12:00:02", "end", "2026-12-02 12:00:05"))), 8,
			[]int{1, 6, 7}, nil},
		{"global skip_during_range", entry("skip_during_range", entry("start", "2026-12-02 12:00:02", "end", "2026-12-02 12:00:05"), "j", ping("seconds", 1)), 8,
			[]int{1, 6, 7}, nil},
		// run_after_skip_range: a job due inside the range runs once a
		// loop_interval after its end, however far off its next run is.
		{"run_after_skip_range", entry("j", ping("seconds", 3, "skip_during_range", entry("start", "2026-12-02 12:00:02", "end", "2026-12-02 12:00:07"), "run_after_skip_range", true)), 12,
			[]int{8, 9}, nil},
		{"skip range refused", entry("j", ping("seconds", 1, "skip_during_range", entry("start", "2026-12-02 12:00:05", "end", "2026-12-02 12:00:02"))), 4, nil, nil},
		{"bad run_explicit", entry("j", ping("seconds", 1, "run_explicit", []any{"tomorrow"})), 4, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			at, funs := ticks(t, tc.sched, t0, tc.n)
			if !slices.Equal(at, tc.wantAt) {
				t.Errorf("runs at %v, want %v", at, tc.wantAt)
			}
			if tc.wantFuns != nil && !slices.Equal(funs, tc.wantFuns) {
				t.Errorf("functions %v, want %v", funs, tc.wantFuns)
			}
		})
	}
}
