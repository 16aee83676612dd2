package output

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
)

func TestHighstate(t *testing.T) {
	run := ordered.FromPairs(
		"test_|-b_|-bee_|-fail_without_changes", ordered.FromPairs("name", "bee", "changes", ordered.New(),
			"result", false, "comment", "Failure!", "__run_num__", 1, "start_time", "01:02:03.000005", "duration", 1.25),
		"test_|-a_|-a_|-succeed_with_changes", ordered.FromPairs("name", "a", "changes",
			ordered.FromPairs("testing", ordered.FromPairs("old", "Unchanged", "new", "Something")),
			"result", true, "comment", "Success!", "__run_num__", 0, "start_time", "01:02:03.000004", "duration", 0.5),
	)
	got, err := Format("highstate", ordered.FromPairs("local", run), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := `local:
----------
          ID: a
    Function: test.succeed_with_changes
      Result: True
     Comment: Success!
     Started: 01:02:03.000004
    Duration: 0.5 ms
     Changes:   
              ----------
              testing:
                  ----------
                  new:
                      Something
                  old:
                      Unchanged
----------
          ID: b
    Function: test.fail_without_changes
        Name: bee
      Result: False
     Comment: Failure!
     Started: 01:02:03.000005
    Duration: 1.25 ms
     Changes:   

Summary for local
------------
Succeeded: 1 (changed=1)
Failed:    1
------------
Total states run:     2
Total run time:   1.750 ms`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("highstate (-want +got):\n%s", diff)
	}
	got, _ = Format("highstate", ordered.FromPairs("local", []any{"Rendering SLS 'base:x' failed: boom"}), Options{})
	want = "local:\n    Data failed to compile:\n----------\n    Rendering SLS 'base:x' failed: boom"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}
