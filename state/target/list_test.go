package target

import (
	"errors"
	"testing"
)

func TestList(t *testing.T) {
	tests := []struct {
		name string
		expr any
		id   string
		want bool
	}{
		{"first", "web1,web2", "web1", true},
		{"last", "web2,web1", "web1", true},
		{"middle", "a,web1,b", "web1", true},
		{"single", "web1", "web1", true},
		{"prefix is not membership", "web10,web2", "web1", false},
		{"spaces are kept", "web1 ,web2", "web1", false},
		{"list", []any{"db1", "web1"}, "web1", true},
		{"list of non-strings", []any{1}, "1", false},
		{"string list", []string{"web1"}, "web1", true},
		// list_match.py tests substrings, so an id holding a comma can match.
		{"id with comma", "a,b,c", "a,b", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Match(tt.expr, List, &Minion{ID: tt.id}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestMatchID(t *testing.T) {
	opts := Options{ListNodegroups: map[string]any{"webs": []any{"web1", "web2"}, "dbs": "db1,db2"}}
	tests := []struct {
		expr any
		kind Kind
		id   string
		want bool
	}{
		{"web*", Glob, "web1", true},
		{"web[!1]", Glob, "web1", false},
		{`web\d`, PCRE, "web1x", true},
		{"db", PCRE, "web1", false},
		{"web1,web2", List, "web2", true},
		{"a,b,c", List, "a,b", false}, // roster_matcher splits into a set
		{[]any{"web1"}, List, "web1", true},
		{"webs", Nodegroup, "web2", true},
		{"dbs", Nodegroup, "db2", true},
		{"nope", Nodegroup, "web1", false},
	}
	for _, tt := range tests {
		got, err := MatchID(tt.expr, tt.kind, tt.id, opts)
		if err != nil {
			t.Fatalf("MatchID(%v, %s): %v", tt.expr, tt.kind, err)
		}
		if got != tt.want {
			t.Errorf("MatchID(%v, %s, %s) = %v, want %v", tt.expr, tt.kind, tt.id, got, tt.want)
		}
	}
	if _, err := MatchID("os:Debian", Grain, "web1", opts); !errors.Is(err, ErrUnsupported) {
		t.Errorf("MatchID grain error = %v, want ErrUnsupported", err)
	}
}
