package match

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
)

var cmpMap = cmp.Comparer(func(a, b *ordered.Map) bool {
	ja, _ := a.MarshalJSON()
	jb, _ := b.MarshalJSON()
	return string(ja) == string(jb)
})

// newEnv builds a minion "web1" with a fresh registry holding the match
// module and a stand-in data.getval.
func newEnv(t *testing.T) *modules.Env {
	t.Helper()
	r := modules.NewRegistry()
	Register(r)
	store := ordered.FromPairs("roles", []any{"Web", "db"}, "conf", ordered.FromPairs("a", 1), "name", "prod", "n", 5)
	r.Register(modules.Function{Name: "data.getval", Spec: modules.Spec{Params: []modules.Param{{Name: "key"}}},
		Fn: func(_ context.Context, c *modules.Call) (any, error) { return store.Value(c.Str("key")), nil }})
	return (&modules.Env{
		Pillar:   ordered.FromPairs("role", "web"),
		Opts:     ordered.FromPairs("id", "web1", "nodegroups", ordered.FromPairs("webs", "web*", "ids", []any{"db1", "db2"})),
		Registry: r,
		Log:      slog.New(slog.NewTextHandler(io.Discard, nil)),
		Context:  map[string]any{},
	}).WithGrains(ordered.FromPairs(
		"id", "web1", "os", "Debian", "roles", []any{"web", "Cache"},
		"ipv4", []any{"10.0.0.5", "127.0.0.1"}, "ipv6", []any{"::1"},
	))
}

func TestMatchFunctions(t *testing.T) {
	tests := []struct {
		fun    string
		args   []any
		kwargs *ordered.Map
		want   any
	}{
		{"match.compound", []any{"G@os:Debian and web*"}, nil, true},
		{"match.compound", []any{"web*", "db1"}, nil, false},
		{"match.compound", []any{"N@webs and not N@ids"}, nil, true},
		{"match.compound", []any{"N@ids"}, ordered.FromPairs("minion_id", "db2"), true},
		{"match.compound", []any{[]any{"G@os:Debian", "and", "web1"}}, nil, true},
		{"match.compound", []any{"and web*"}, nil, false}, // malformed: logged, False
		{"match.compound", []any{"R@%cluster"}, nil, false},
		{"match.compound", []any{5}, nil, false},
		{"match.glob", []any{"web*"}, nil, true},
		{"match.glob", []any{"web*", "db1"}, nil, false},
		{"match.glob", []any{"1*", 12}, nil, true}, // minion_id goes through str()
		{"match.glob", []any{1}, nil, false},
		{"match.pcre", []any{"w.b"}, nil, true},
		{"match.pcre", []any{"eb"}, nil, false},
		{"match.pcre", []any{"("}, nil, false},
		{"match.list", []any{"db1,web1"}, nil, true},
		{"match.list", []any{[]any{"web1"}}, nil, true},
		{"match.list", []any{ordered.FromPairs("web1", 1)}, nil, true},
		{"match.list", []any{1}, nil, false},
		{"match.grain", []any{"os:Debian"}, nil, true},
		{"match.grain", []any{"os|debian"}, ordered.FromPairs("delimiter", "|"), true},
		{"match.grain", []any{"os"}, nil, false},
		{"match.grain", []any{"os:Debian", ""}, nil, false},
		{"match.grain", []any{"roles:cache"}, nil, true},
		{"match.grain_pcre", []any{"os:deb"}, nil, true},
		{"match.pillar", []any{"role:w*"}, nil, true},
		{"match.pillar", []any{"os:Debian"}, nil, false},
		{"match.pillar_pcre", []any{"role:w.b"}, nil, true},
		{"match.ipcidr", []any{"10.0.0.0/8"}, nil, true},
		{"match.ipcidr", []any{"10.0.0.5"}, nil, true},
		{"match.ipcidr", []any{"192.168.0.0/16"}, nil, false},
		{"match.ipcidr", []any{167772165}, nil, true}, // ip_address(int) is 10.0.0.5
		{"match.ipcidr", []any{"bogus"}, nil, []any{}},
		{"match.data", []any{"roles:web"}, nil, true}, // list members are lowercased
		{"match.data", []any{"conf:a"}, nil, true},
		{"match.data", []any{"name:pr*"}, nil, true},
		{"match.data", []any{"name:PR*"}, nil, false}, // a string value is not
		{"match.data", []any{"n:5"}, nil, false},
		{"match.data", []any{"missing:x"}, nil, false},
		{"match.data", []any{"nocolon"}, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.fun, func(t *testing.T) {
			env := newEnv(t)
			got, err := env.Run(context.Background(), tt.fun, tt.args, tt.kwargs)
			if err != nil {
				t.Fatalf("%s%v: %v", tt.fun, tt.args, err)
			}
			if diff := cmp.Diff(tt.want, got, cmpMap); diff != "" {
				t.Errorf("%s%v (-want +got):\n%s", tt.fun, tt.args, diff)
			}
		})
	}
}

func TestUnsupportedRegexFails(t *testing.T) {
	env := newEnv(t)
	for _, fun := range []string{"match.pcre", "match.compound"} {
		tgt := "(?=w)web"
		if fun == "match.compound" {
			tgt = "E@" + tgt
		}
		_, err := env.Run(context.Background(), fun, []any{tgt}, nil)
		var ee *modules.ExecutionError
		if !errors.As(err, &ee) {
			t.Errorf("%s(%q) error = %v, want an *ExecutionError", fun, tgt, err)
		}
	}
}

func TestFilterBy(t *testing.T) {
	webdb := ordered.FromPairs("web*", "W", "db*", "D")
	tests := []struct {
		name   string
		args   []any
		kwargs *ordered.Map
		want   any
	}{
		{"first match", []any{webdb}, nil, "W"},
		{"minion_id", []any{webdb}, ordered.FromPairs("minion_id", "db1"), "D"},
		{"default", []any{ordered.FromPairs("x*", 1, "default", 2)}, nil, 2},
		{"named default", []any{ordered.FromPairs("x*", 1, "other", 3)}, ordered.FromPairs("default", "other"), 3},
		{"no default", []any{ordered.FromPairs("x*", 1)}, nil, nil},
		{"glob", []any{webdb, "glob"}, nil, "W"},
		{"list_", []any{ordered.FromPairs("db1,web1", "L")}, ordered.FromPairs("tgt_type", "list_"), "L"},
		{"grain", []any{ordered.FromPairs("os:Ubuntu", "U", "os:Debian", "Deb")}, ordered.FromPairs("tgt_type", "grain"), "Deb"},
		// filter_by passes minion_id as the second positional argument,
		// which for match.grain is the delimiter.
		{"grain minion_id is delimiter", []any{ordered.FromPairs("os|Debian", "yes")},
			ordered.FromPairs("tgt_type", "grain", "minion_id", "|"), "yes"},
		{"merge", []any{ordered.FromPairs("web*", ordered.FromPairs("a", ordered.FromPairs("b", 1), "l", []any{1}))},
			ordered.FromPairs("merge", ordered.FromPairs("a", ordered.FromPairs("c", 2), "l", []any{1.0, 2}), "merge_lists", true),
			ordered.FromPairs("a", ordered.FromPairs("b", 1, "c", 2), "l", []any{1, 2})},
		{"merge replaces lists", []any{ordered.FromPairs("web*", ordered.FromPairs("l", []any{1}))},
			ordered.FromPairs("merge", ordered.FromPairs("l", []any{2})),
			ordered.FromPairs("l", []any{2})},
		{"merge into None", []any{ordered.FromPairs("web*", nil)}, ordered.FromPairs("merge", ordered.FromPairs("m", 1)),
			ordered.FromPairs("m", 1)},
		{"merge skips the default", []any{ordered.FromPairs("x*", 1, "default", ordered.FromPairs("d", 1))},
			ordered.FromPairs("merge", ordered.FromPairs("m", 1)), ordered.FromPairs("d", 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newEnv(t)
			got, err := env.Run(context.Background(), "match.filter_by", tt.args, tt.kwargs)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmpMap); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestFilterByErrors(t *testing.T) {
	env := newEnv(t)
	webdb := ordered.FromPairs("web*", "W")
	for _, kw := range []*ordered.Map{
		ordered.FromPairs("tgt_type", "list"), // match.py has list_, not list
		ordered.FromPairs("tgt_type", "nope"),
		ordered.FromPairs("merge", []any{1}),
		ordered.FromPairs("tgt_type", "ipcidr", "minion_id", "x"),
	} {
		if _, err := env.Run(context.Background(), "match.filter_by", []any{webdb}, kw); err == nil {
			t.Errorf("filter_by %v: no error", kw.StringKeys())
		}
	}
}

func TestSearchBy(t *testing.T) {
	tests := []struct {
		name   string
		lookup *ordered.Map
		kwargs *ordered.Map
		want   any
	}{
		{"keys per matching target", ordered.FromPairs("web", []any{"web*"}, "db", []any{"db*"}, "all", []any{"*", "G@os:Debian"}),
			nil, []any{"web", "all", "all"}},
		{"none", ordered.FromPairs("db", []any{"db*"}), nil, nil},
		{"minion_id", ordered.FromPairs("db", []any{"db*"}), ordered.FromPairs("minion_id", "db3"), []any{"db"}},
		// A string is iterated character by character: "*" matches.
		{"string targets", ordered.FromPairs("x", "q*"), nil, []any{"x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newEnv(t)
			got, err := env.Run(context.Background(), "match.search_by", []any{tt.lookup}, tt.kwargs)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestIfelse(t *testing.T) {
	tests := []struct {
		name   string
		args   []any
		kwargs *ordered.Map
		want   any
	}{
		{"first pair", []any{"web*", "W", "D"}, nil, "W"},
		{"default", []any{"db*", "x", "dflt"}, nil, "dflt"},
		{"true", []any{true, "T", "F"}, nil, "T"},
		{"false", []any{false, "T", "F"}, nil, "F"},
		{"one argument", []any{"only"}, nil, "only"},
		{"tgt_type", []any{"w.b", "P", "N"}, ordered.FromPairs("tgt_type", "pcre"), "P"},
		{"minion_id", []any{"db*", "D", "N"}, ordered.FromPairs("minion_id", "db1"), "D"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := newEnv(t)
			got, err := env.Run(context.Background(), "match.ifelse", tt.args, tt.kwargs)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	env := newEnv(t)
	if _, err := env.Run(context.Background(), "match.ifelse", []any{"a", "b"}, nil); err == nil {
		t.Error("even argument count: no error")
	}
	_, err := env.Run(context.Background(), "match.ifelse", []any{"a"}, ordered.FromPairs("bogus", 1))
	var ae *modules.ArgError
	if !errors.As(err, &ae) {
		t.Errorf("unknown keyword: error = %v, want an *ArgError", err)
	}
}

func TestRegisteredNames(t *testing.T) {
	r := modules.NewRegistry()
	Register(r)
	want := []string{"match.compound", "match.data", "match.filter_by", "match.glob", "match.grain", "match.grain_pcre",
		"match.ifelse", "match.ipcidr", "match.list", "match.pcre", "match.pillar", "match.pillar_pcre", "match.search_by"}
	if diff := cmp.Diff(want, r.Names(&modules.Env{})); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
}
