package target

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
)

func testNodegroups() map[string]any {
	return map[string]any{
		"web":     "web*",
		"debian":  "G@os:Debian",
		"ids":     []any{"web1", "db1"},
		"ids_re":  []any{"web[12]", "db1"},
		"webdeb":  "N@web and N@debian",
		"deep":    []any{"N@webdeb", "or", "N@ids"},
		"either":  "web1 or db1",
		"loop_a":  "N@loop_b",
		"loop_b":  "N@loop_a",
		"self":    "N@self or web1",
		"missing": "N@nope",
		"empty":   "",
		"globs":   []any{"web*", "db*"},
		"bad":     42,
	}
}

func TestExpandNodegroup(t *testing.T) {
	groups := testNodegroups()
	tests := []struct {
		name string
		want []string
	}{
		{"web", []string{"web*"}},
		{"debian", []string{"G@os:Debian"}},
		{"ids", []string{"L@web1,db1"}},
		{"ids_re", []string{"E@web[12],db1"}},
		{"either", []string{"web1", "or", "db1"}},
		{"webdeb", []string{"(", "(", "web*", ")", "and", "(", "G@os:Debian", ")", ")"}},
		{"deep", []string{"(", "(", "(", "web*", ")", "and", "(", "G@os:Debian", ")", ")", "or", "L@web1,db1", ")"}},
		{"empty", []string{"L@"}},
	}
	for _, tt := range tests {
		got, err := expandNodegroup(tt.name, groups, nil, true)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("expand %s (-want +got):\n%s", tt.name, diff)
		}
	}
}

func TestNodegroupMatch(t *testing.T) {
	opts := Options{Nodegroups: testNodegroups()}
	tests := []struct {
		kind Kind
		expr string
		id   string
		want bool
	}{
		{Nodegroup, "web", "web1", true},
		{Nodegroup, "ids", "db1", true},
		{Nodegroup, "ids", "web2", false},
		// Salt joins a word list holding regex characters into one regex.
		{Nodegroup, "ids_re", "web1", false},
		{Nodegroup, "ids_re", "web1,db1", true},
		{Nodegroup, "webdeb", "web1", true},
		{Nodegroup, "webdeb", "db1", false},
		{Nodegroup, "deep", "db1", true},
		{Nodegroup, "either", "db1", true},
		{Nodegroup, "empty", "web1", false},
		{Compound, "N@webdeb and not N@ids", "web1", false},
		{Compound, "N@webdeb and not N@ids", "web2", true},
		{Compound, "N@ids or N@web", "web9", true},
		// A top-level group without nested N@ is spliced in without
		// parentheses (nodegroup_comp), so this reads
		// "web1 or db1 and G@os:Ubuntu" and matches web1.
		{Compound, "N@either and G@os:Ubuntu", "web1", true},
		{Compound, "N@either and G@os:Ubuntu", "db1", false},
		// Nested groups are parenthesised.
		{Compound, "N@deep and G@os:Ubuntu", "db1", false},
	}
	for _, tt := range tests {
		t.Run(string(tt.kind)+"/"+tt.expr+"/"+tt.id, func(t *testing.T) {
			got, err := Match(tt.expr, tt.kind, testMinion(tt.id), opts)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestNodegroupErrors(t *testing.T) {
	opts := Options{Nodegroups: testNodegroups()}
	tests := []struct {
		kind Kind
		expr string
		is   error
	}{
		{Nodegroup, "loop_a", ErrNodegroupLoop},
		{Nodegroup, "self", ErrNodegroupLoop},
		{Compound, "web* or N@loop_b", ErrNodegroupLoop},
		{Nodegroup, "missing", ErrUnknownNodegroup},
		{Nodegroup, "nope", ErrUnknownNodegroup},
		{Compound, "N@nope", ErrUnknownNodegroup},
	}
	for _, tt := range tests {
		_, err := Compile(tt.expr, tt.kind, opts)
		if !errors.Is(err, tt.is) {
			t.Errorf("Compile(%q, %s) error = %v, want %v", tt.expr, tt.kind, err, tt.is)
		}
		var ne *NodegroupError
		if !errors.As(err, &ne) {
			t.Errorf("Compile(%q, %s) error = %v, want a *NodegroupError", tt.expr, tt.kind, err)
		}
	}
	// A list of globs without operators is "web* db*", which Salt's eval
	// rejects.
	var se *SyntaxError
	if _, err := Compile("globs", Nodegroup, opts); !errors.As(err, &se) {
		t.Errorf("globs: error = %v, want a *SyntaxError", err)
	}
	if _, err := Compile("bad", Nodegroup, opts); err == nil {
		t.Errorf("bad: no error for a non-string, non-list definition")
	}
}

func TestNodegroupLoopMessage(t *testing.T) {
	_, err := Compile("loop_a", Nodegroup, Options{Nodegroups: testNodegroups()})
	want := `compile nodegroup target: nodegroup "loop_a" (via loop_a -> loop_b -> loop_a): refers to itself`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v\nwant    %s", err, want)
	}
}

func TestNodegroupExpansionBounded(t *testing.T) {
	groups := map[string]any{"g0": "web1"}
	for i := 1; i <= 40; i++ {
		prev := fmt.Sprintf("N@g%d", i-1)
		groups[fmt.Sprintf("g%d", i)] = prev + " or " + prev
	}
	_, err := Compile("g40", Nodegroup, Options{Nodegroups: groups})
	var ne *NodegroupError
	if !errors.As(err, &ne) {
		t.Fatalf("error = %v, want a *NodegroupError", err)
	}
}

func TestOptionsFromConfig(t *testing.T) {
	cfg := ordered.FromPairs(
		"nodegroups", ordered.FromPairs("webs", "web*", 1, "L@x"),
		"ssh_list_nodegroups", ordered.FromPairs("dbs", []any{"db1"}),
		"id", "master",
	)
	opts := OptionsFromConfig(cfg)
	want := Options{Nodegroups: map[string]any{"webs": "web*", "1": "L@x"}, ListNodegroups: map[string]any{"dbs": []any{"db1"}}}
	if diff := cmp.Diff(want, opts); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := OptionsFromConfig(nil); got.Nodegroups != nil || got.ListNodegroups != nil {
		t.Errorf("nil config: %+v", got)
	}
}
