package output

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
)

// orchRun is an orchestration's return: one salt.state that changed a
// minion, and a salt.runner that ran an inner orchestration.
func orchRun() *ordered.Map {
	minion := ordered.FromPairs("test_|-w_|-w_|-succeed_with_changes", ordered.FromPairs("name", "w", "result", true,
		"comment", "Success!", "__run_num__", 0, "changes", ordered.FromPairs("k", "v")))
	inner := ordered.FromPairs("data", ordered.FromPairs("m_master", ordered.FromPairs(
		"test_|-n_|-n_|-nop", ordered.FromPairs("name", "n", "result", true, "comment", "Nop", "__run_num__", 0,
			"changes", ordered.New()))), "outputter", "highstate", "retcode", 0)
	return ordered.FromPairs(
		"salt_|-web_|-web_|-state", ordered.FromPairs("name", "web", "result", true, "__run_num__", 0,
			"comment", "States ran successfully. Updating web1.",
			"changes", ordered.FromPairs("out", "highstate", "ret", ordered.FromPairs("web1", minion))),
		"salt_|-inner_|-state.orchestrate_|-runner", ordered.FromPairs("name", "state.orchestrate", "result", true,
			"__run_num__", 1, "comment", "Runner function 'state.orchestrate' executed.",
			"changes", ordered.FromPairs("return", inner)))
}

func TestHighstateOrchestration(t *testing.T) {
	env := ordered.FromPairs("data", ordered.FromPairs("m_master", orchRun()), "outputter", "highstate", "retcode", 0)
	got := Highstate(env, Options{}, HighstateOptions{NoProfile: true})
	want := `m_master:
----------
          ID: web
    Function: salt.state
      Result: True
     Comment: States ran successfully. Updating web1.
     Changes:   
              web1:
              ----------
                        ID: w
                  Function: test.succeed_with_changes
                    Result: True
                   Comment: Success!
                   Changes:   
                            ----------
                            k:
                                v
              
              Summary for web1
              ------------
              Succeeded: 1 (changed=1)
              Failed:    0
              ------------
              Total states run:     1
----------
          ID: inner
    Function: salt.runner
        Name: state.orchestrate
      Result: True
     Comment: Runner function 'state.orchestrate' executed.
     Changes:                 
              m_master:
              ----------
                        ID: n
                  Function: test.nop
                    Result: True
                   Comment: Nop
                   Changes:   
              
              Summary for m_master
              ------------
              Succeeded: 1
              Failed:    0
              ------------
              Total states run:     1

Summary for m_master
------------
Succeeded: 2 (changed=2)
Failed:    0
------------
Total states run:     2`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("orchestration highstate (-want +got):\n%s", diff)
	}
}

func TestOrchestrationData(t *testing.T) {
	run := ordered.FromPairs("s", ordered.FromPairs("result", true))
	for _, tc := range []struct {
		name string
		in   any
		want string
	}{
		{"envelope", ordered.FromPairs("data", ordered.FromPairs("x_master", run), "outputter", "highstate", "retcode", 1), "x_master"},
		{"retcode beside one master", ordered.FromPairs("x_master", run, "retcode", 1), "x_master"},
		{"retcode kept without a master", ordered.FromPairs("m1", run, "retcode", 1), "m1,retcode"},
		{"lookup_jid answer", ordered.FromPairs("x_master", ordered.FromPairs("jid", "1", "fun", "runner.state.orch",
			"return", ordered.FromPairs("data", ordered.FromPairs("y_master", run)))), "y_master"},
		{"job return", ordered.FromPairs("return", ordered.FromPairs("m1", run)), "m1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := orchestrationData(tc.in).(*ordered.Map)
			if !ok {
				t.Fatalf("not a mapping: %v", got)
			}
			var keys []string
			got.Range(func(k, _ any) bool { keys = append(keys, ordered.KeyString(k)); return true })
			if strings.Join(keys, ",") != tc.want {
				t.Errorf("keys %v, want %s", keys, tc.want)
			}
		})
	}
}
