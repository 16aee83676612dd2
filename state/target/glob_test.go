package target

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// testdata/fnmatch.jsonl holds [pattern, name, result] triples produced
// by CPython 3.11's fnmatch.fnmatch, which Salt's glob matcher calls
// (salt/matchers/glob_match.py); "error" marks a pattern CPython rejects.
func TestGlobAgainstCPython(t *testing.T) {
	f, err := os.Open("testdata/fnmatch.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		var row [3]any
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatal(err)
		}
		pat, name := row[0].(string), row[1].(string)
		g, err := compileGlob(pat)
		if row[2] == "error" {
			if err == nil {
				t.Errorf("compileGlob(%q) succeeded, CPython raises", pat)
			}
			continue
		}
		if err != nil {
			t.Errorf("compileGlob(%q): %v", pat, err)
			continue
		}
		if got, want := g.match(name), row[2].(bool); got != want {
			t.Errorf("fnmatch(%q, %q) = %v, want %v", name, pat, got, want)
		}
		up := strings.ToUpper(name)
		if got, want := g.matchLower(up), g.match(strings.ToLower(up)); got != want {
			t.Errorf("matchLower(%q) with %q = %v, want %v", up, pat, got, want)
		}
		n++
	}
	if n < 1000 {
		t.Fatalf("only %d cases read", n)
	}
}

func TestGlobMatcher(t *testing.T) {
	tests := []struct {
		pat, id string
		want    bool
	}{
		{"web*", "web1", true},
		{"web*", "Web1", false}, // case-sensitive on POSIX
		{"web[!1]", "web1", false},
		{"web[!1]", "web2", true},
		{"*.example.com", "a.b.example.com", true},
		{"", "", true},
		{"", "web1", false},
	}
	for _, tt := range tests {
		t.Run(tt.pat+"/"+tt.id, func(t *testing.T) {
			got, err := Match(tt.pat, Glob, &Minion{ID: tt.id}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}
