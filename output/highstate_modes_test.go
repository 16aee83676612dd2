package output

import (
	"strings"
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
)

func modesData() *ordered.Map {
	state := func(result any, changes *ordered.Map, num int) *ordered.Map {
		return ordered.FromPairs("result", result, "comment", "c", "changes", changes, "__run_num__", num,
			"start_time", "01:02:03.000004", "duration", 1.5)
	}
	return ordered.FromPairs("web1", ordered.FromPairs(
		"test_|-clean_|-clean-name_|-succeed_without_changes", state(true, ordered.New(), 0),
		"test_|-changed_|-changed-name_|-succeed_with_changes", state(true, ordered.FromPairs("k", "v"), 1),
		"test_|-broken_|-broken-name_|-fail_without_changes", state(false, ordered.New(), 2),
	))
}

// Expected lines follow salt/output/highstate.py _format_terse.
func TestHighstateModes(t *testing.T) {
	terse := func(name, fun, result string) string {
		return " Name: " + name + " - Function: test." + fun + " - Result: " + result + " - Started: 01:02:03.000004 - Duration: 1.5 ms"
	}
	for _, c := range []struct {
		mode       string
		terse      []string // lines that must be terse
		full, gone []string // IDs printed in full / not at all
	}{
		{"full", nil, []string{"clean", "changed", "broken"}, nil},
		{"terse", []string{terse("clean-name", "succeed_without_changes", "Clean"), terse("changed-name", "succeed_with_changes", "Changed"), terse("broken-name", "fail_without_changes", "Failed")}, nil, nil},
		{"terse_id", []string{terse("clean", "succeed_without_changes", "Clean")}, nil, nil},
		{"mixed", []string{terse("clean-name", "succeed_without_changes", "Clean"), terse("changed-name", "succeed_with_changes", "Changed")}, []string{"broken"}, nil},
		{"changes", []string{terse("clean-name", "succeed_without_changes", "Clean")}, []string{"changed", "broken"}, nil},
	} {
		t.Run(c.mode, func(t *testing.T) {
			out := Highstate(modesData(), Options{}, HighstateOptions{Mode: c.mode})
			for _, l := range c.terse {
				if !strings.Contains(out, l) {
					t.Errorf("missing terse line %q in\n%s", l, out)
				}
			}
			for _, id := range c.full {
				if !strings.Contains(out, "      ID: "+id+"\n") {
					t.Errorf("state %s not in full form:\n%s", id, out)
				}
			}
			if !strings.Contains(out, "Total states run:     3") {
				t.Errorf("summary changed by the mode:\n%s", out)
			}
		})
	}
	filtered := Highstate(modesData(), Options{}, HighstateOptions{Mode: "filter", Exclude: []string{"True"}, TerseResults: []string{"False"}})
	if strings.Contains(filtered, "clean") || !strings.Contains(filtered, terse("broken-name", "fail_without_changes", "Failed")) {
		t.Errorf("filter mode:\n%s", filtered)
	}
}

func TestParseHighstateOptions(t *testing.T) {
	opts := ordered.FromPairs("state_output", "mixed", "state_verbose", false, "state_output_exclude", "True,None")
	ho := ParseHighstateOptions(opts, "", "")
	if ho.Mode != "mixed" || !ho.Quiet || len(ho.Exclude) != 2 {
		t.Errorf("from config: %+v", ho)
	}
	if ho := ParseHighstateOptions(opts, "Terse", "True"); ho.Mode != "terse" || ho.Quiet {
		t.Errorf("flags over config: %+v", ho)
	}
	for flag, quiet := range map[string]bool{"false": true, "False": true, "true": false, "FALSE": false, "no": false} {
		if ho := ParseHighstateOptions(ordered.New(), "", flag); ho.Quiet != quiet {
			t.Errorf("--state-verbose %s: quiet %v, want %v", flag, ho.Quiet, quiet)
		}
	}
}
