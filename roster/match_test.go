package roster

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Expectations were produced with Python's fnmatch.fnmatchcase and
// re.match.
func TestMatchers(t *testing.T) {
	tests := []struct {
		typ, pat, id string
		want         bool
	}{
		{"glob", "web*", "web1", true},
		{"glob", "web*", "db1", false},
		{"glob", "web?", "web10", false},
		{"glob", "web[0-9]", "web5", true},
		{"glob", "web[!0-9]", "web5", false},
		{"glob", "web[!0-9]", "webx", true},
		{"glob", "[]]x", "]x", true},
		{"glob", "[!]]x", "ax", true},
		{"glob", "a[b", "a[b", true},
		{"glob", "*", "a/b", true},
		{"glob", "a*", "a\nb", true},
		{"glob", "w[z-a]b", "wzb", false},
		{"glob", "w[!z-a]b", "wxb", true},
		{"glob", "web1.example.com", "web1xexample.com", false},
		{"glob", "[a-c-]", "-", true},
		{"glob", "x*y*", "xay", true},
		{"glob", "WEB*", "web1", false},
		{"glob", `a\*`, `a\b`, true},
		{"pcre", "web", "web1", true},
		{"pcre", `web\d$`, "web1", true},
		{"pcre", `web\d$`, "xweb1", false},
		{"pcre", ".*db", "xdb1", true},
		{"pcre", "a|b", "bz", true},
		{"list", "a,web1", "web1", true},
		{"list", "a, web1", "web1", false},
		{"list", "web", "web1", false},
	}
	for _, tc := range tests {
		t.Run(tc.typ+" "+tc.pat+" "+tc.id, func(t *testing.T) {
			m, err := compileMatcher(tc.pat, tc.typ, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := m(tc.id); got != tc.want {
				t.Errorf("match = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestTargetsSelection(t *testing.T) {
	cfg := testConfig()
	cfg.ListNodegroups = map[string]any{"dbs": []any{"db2", "db1"}, "web": "web1,web2"}
	src := "web2: a\nweb1: b\ndb1: c\ndb2: d\n"
	f, err := ParseFlat(context.Background(), []byte(src), "roster", cfg)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		tgt, typ string
		want     []string
	}{
		{"web*", "glob", []string{"web2", "web1"}},
		{"*", "", []string{"web2", "web1", "db1", "db2"}},
		{"db1,web1", "list", []string{"web1", "db1"}},
		{"d", "pcre", []string{"db1", "db2"}},
		{"dbs", "nodegroup", []string{"db1", "db2"}},
		{"web", "nodegroup", []string{"web2", "web1"}},
		{"nope", "nodegroup", nil},
		{"nope*", "glob", nil},
	}
	for _, tc := range tests {
		t.Run(tc.typ+":"+tc.tgt, func(t *testing.T) {
			ts, err := f.Targets(context.Background(), tc.tgt, tc.typ)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, x := range ts {
				got = append(got, x.ID)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := f.Targets(context.Background(), "G@os:Debian", "compound"); !errors.Is(err, ErrUnsupportedTargetType) {
		t.Errorf("compound: err = %v, want ErrUnsupportedTargetType", err)
	}
	if _, err := f.Targets(context.Background(), "(?=x)", "pcre"); err == nil {
		t.Error("lookahead pcre: want a compile error (RE2)")
	}
}
