package run_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
)

// waitFor is a shell loop that succeeds once path exists and fails after
// about ten seconds: a state running it sequentially before the state
// that creates path fails, so the result proves the two overlapped.
func waitFor(path string) string {
	return fmt.Sprintf("i=0; while [ $i -lt 1000 ]; do [ -e %s ] && exit 0; sleep 0.01; i=$((i+1)); done; exit 1", path)
}

// TestParallelStatesOverlap runs a parallel state that can only succeed
// while a later state runs, and checks Salt's semantics around it: a
// requisite waits for the parallel state's real result, a failed
// parallel state fails its dependants, and the returns carry
// `__parallel__` and their run numbers in order.
func TestParallelStatesOverlap(t *testing.T) {
	dir := t.TempDir()
	flag := filepath.Join(dir, "flag")
	sls := fmt.Sprintf(`waiter:
  cmd.run:
    - name: %q
    - parallel: True
doomed:
  cmd.run:
    - name: "exit 3"
    - parallel: True
signal:
  cmd.run:
    - name: "touch %s"
after_waiter:
  test.succeed_without_changes:
    - require:
      - cmd: waiter
after_doomed:
  test.succeed_without_changes:
    - require:
      - cmd: doomed
`, waitFor(flag), flag)
	res, err := runner(false).CallHigh(context.Background(), high(t, sls))
	if err != nil {
		t.Fatalf("CallHigh: %v", err)
	}
	type row struct {
		ID       string
		Result   any
		RunNum   any
		Parallel any
		Changed  bool
	}
	var got []row
	res.Map().Range(func(k, v any) bool {
		m := v.(*ordered.Map)
		got = append(got, row{ID: ordered.KeyString(m.Value("__id__")), Result: m.Value("result"), RunNum: m.Value("__run_num__"),
			Parallel: m.Value("__parallel__"), Changed: m.Value("changes").(*ordered.Map).Len() > 0})
		return true
	})
	want := []row{
		{ID: "waiter", Result: true, RunNum: 0, Parallel: true, Changed: true},
		{ID: "doomed", Result: false, RunNum: 1, Parallel: true, Changed: true},
		{ID: "signal", Result: true, RunNum: 2, Changed: true},
		{ID: "after_waiter", Result: true, RunNum: 3},
		{ID: "after_doomed", Result: false, RunNum: 4},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("returns (-want +got):\n%s", d)
	}
	ret, _ := res.Get("test_|-after_doomed_|-after_doomed_|-succeed_without_changes")
	if c := ret.Value("comment"); c != "One or more requisite failed: s.doomed" {
		t.Errorf("after_doomed comment = %q", c)
	}
	w, _ := res.Get("cmd_|-waiter_|-" + waitFor(flag) + "_|-run")
	for _, k := range []string{"start_time", "duration", "__sls__", "__id__"} {
		if !w.Has(k) {
			t.Errorf("parallel return lacks %s: %v", k, w)
		}
	}
	if c := w.Value("comment"); c != fmt.Sprintf("Command %q run", waitFor(flag)) {
		t.Errorf("waiter comment = %v, want the state's own comment", c)
	}
}

// TestParallelEndOfRunWaits checks that a parallel state nothing depends
// on is still waited for: its return is complete when the run returns.
func TestParallelEndOfRunWaits(t *testing.T) {
	dir := t.TempDir()
	flag := filepath.Join(dir, "flag")
	sls := fmt.Sprintf(`last:
  cmd.run:
    - name: "sleep 0.2; touch %s"
    - parallel: True
`, flag)
	res, err := runner(false).CallHigh(context.Background(), high(t, sls))
	if err != nil {
		t.Fatalf("CallHigh: %v", err)
	}
	got, _ := res.Get(res.Tags()[0])
	if got.Value("result") != true || got.Value("__parallel__") != true {
		t.Fatalf("parallel state not reconciled: %v", got)
	}
}

// TestParallelTestMode checks that test=True still runs the state
// function (in its own goroutine) and reports its would-change result.
func TestParallelTestMode(t *testing.T) {
	out, errs := runSLS(t, `p:
  cmd.run:
    - name: "true"
    - parallel: True
`, true)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	want := []string{`p.run <nil> Command "true" would have been executed`}
	if d := cmp.Diff(want, out); d != "" {
		t.Fatalf("(-want +got):\n%s", d)
	}
}

// TestParallelRetry checks _call_parallel_target's retry loop, which
// re-runs up to `attempts` times after the first run (State.call runs
// `attempts` times in all), appends one "Attempt n" line per re-run, and
// leaves `__parallel__` out of a retried return, as Salt does.
func TestParallelRetry(t *testing.T) {
	dir := t.TempDir()
	count := func(name string) int {
		b, _ := os.ReadFile(filepath.Join(dir, name))
		return strings.Count(string(b), "x")
	}
	sls := fmt.Sprintf(`par:
  cmd.run:
    - name: "echo x >> %[1]s/par; exit 1"
    - parallel: True
    - retry:
        attempts: 2
        interval: 0
seq:
  cmd.run:
    - name: "echo x >> %[1]s/seq; exit 1"
    - retry:
        attempts: 2
        interval: 0
`, dir)
	res, err := runner(false).CallHigh(context.Background(), high(t, sls))
	if err != nil {
		t.Fatalf("CallHigh: %v", err)
	}
	if p, s := count("par"), count("seq"); p != 3 || s != 2 {
		t.Errorf("runs: parallel %d, sequential %d; want 3 and 2", p, s)
	}
	var par *ordered.Map
	for _, tag := range res.Tags() {
		if strings.Contains(tag, "_|-par_|-") {
			par, _ = res.Get(tag)
		}
	}
	c := ordered.KeyString(par.Value("comment"))
	if strings.Count(c, "Attempt ") != 2 || !strings.Contains(c, "Attempt 2: Returned a result of \"False\"") || par.Has("__parallel__") {
		t.Errorf("parallel retry return: comment %q, __parallel__ %v", c, par.Value("__parallel__"))
	}
}
