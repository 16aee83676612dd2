package output

import (
	"strings"
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
)

// TestHighstateParallelRunTime checks Salt's total for parallel states:
// the sum of the sequential durations plus only the longest parallel one.
func TestHighstateParallelRunTime(t *testing.T) {
	ret := func(name string, num int, d float64, parallel bool) *ordered.Map {
		m := ordered.FromPairs("name", name, "changes", ordered.New(), "result", true, "comment", "ok",
			"__run_num__", num, "start_time", "01:02:03.000004", "duration", d)
		if parallel {
			m.Set("__parallel__", true)
		}
		return m
	}
	run := ordered.FromPairs(
		"test_|-p1_|-p1_|-nop", ret("p1", 0, 100, true),
		"test_|-p2_|-p2_|-nop", ret("p2", 1, 300, true),
		"test_|-s_|-s_|-nop", ret("s", 2, 2.5, false),
	)
	got, err := Format("highstate", ordered.FromPairs("local", run), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := "Total run time: 302.500 ms"; !strings.Contains(got, want) {
		t.Fatalf("want %q in:\n%s", want, got)
	}
}
