package run_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/brinesalt/brine/state/run"
)

// TestFatalErrorAbortsFromAnyDepth checks that an invalid keyword
// argument aborts the whole job however the bad state is reached: in
// order, pulled forward as a requisite, as a prereq's test run, or as a
// watched state; the states after it never run.
func TestFatalErrorAbortsFromAnyDepth(t *testing.T) {
	const bad = `bad:
  test.configurable_test_state:
    - not_an_argument: 1
`
	tests := []struct{ name, sls string }{
		{"in order", bad},
		{"require", "first:\n  test.succeed_with_changes:\n    - require:\n      - test: bad\n" + bad},
		{"prereq", "first:\n  test.succeed_with_changes:\n    - prereq:\n      - test: bad\n" + bad},
		{"prereq_in", "first:\n  test.succeed_with_changes\n" + bad + "    - prereq_in:\n      - test: first\n"},
		{"watch", bad + "    - watch:\n      - test: ok\nok:\n  test.succeed_with_changes\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			marker := filepath.Join(t.TempDir(), "after")
			sls := tc.sls + "after:\n  cmd.run:\n    - name: touch " + marker + "\n"
			res, err := runner(false).CallHigh(context.Background(), high(t, sls))
			var fatal *run.FatalError
			if !errors.As(err, &fatal) || err.Error() != "'not_an_argument' is an invalid keyword argument for 'test.configurable_test_state'" {
				t.Fatalf("CallHigh = %v, %v; want the FatalError", res, err)
			}
			if res != nil {
				t.Errorf("results %v returned beside the fatal error", res.Map())
			}
			if _, err := os.Stat(marker); !os.IsNotExist(err) {
				t.Errorf("a state after the fatal one ran (stat: %v)", err)
			}
		})
	}
}
