package grains

import (
	"context"
	_ "github.com/brinesalt/brine/state/coregrains/grainsyaml" // grains files and custom grain output
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/coregrains"
	"github.com/brinesalt/brine/state/modules"
)

var cmpMap = cmp.Comparer(func(a, b *ordered.Map) bool {
	ja, _ := a.MarshalJSON()
	jb, _ := b.MarshalJSON()
	return string(ja) == string(jb)
})

func newEnv(t *testing.T) *modules.Env {
	return (&modules.Env{
		Pillar:   ordered.New(),
		Opts:     ordered.FromPairs("config_dir", t.TempDir()),
		Registry: modules.Default,
		Log:      slog.New(slog.NewTextHandler(io.Discard, nil)),
		Context:  map[string]any{},
	}).WithGrains(ordered.FromPairs(
		"id", "web1.example.com", "os", "Debian", "os_family", "Debian", "host", "web1",
		"deep", ordered.FromPairs("nested", ordered.FromPairs("key", "found-it")),
		"roles", []any{"web", ordered.FromPairs("db", "primary")},
		"ports", ordered.FromPairs(80, "http"),
		"serialnumber", "ABCDEFGH",
	))
}

func TestRead(t *testing.T) {
	tests := []struct {
		fun    string
		args   []any
		kwargs *ordered.Map
		want   any
	}{
		{"grains.get", []any{"os"}, nil, "Debian"},
		{"grains.get", []any{"deep:nested:key"}, nil, "found-it"},
		{"grains.fetch", []any{"deep:nested:key"}, nil, "found-it"},
		{"grains.get", []any{"deep|nested|key"}, ordered.FromPairs("delimiter", "|"), "found-it"},
		{"grains.get", []any{"missing"}, nil, ""},
		{"grains.get", []any{"missing:x", "dflt"}, nil, "dflt"},
		{"grains.get", []any{"roles:0"}, nil, "web"},
		{"grains.get", []any{"roles:db"}, nil, "primary"},
		{"grains.get", []any{"ports:80"}, nil, "http"},
		{"grains.get", []any{"os:x"}, nil, ""},
		{"grains.has_value", []any{"deep:nested"}, nil, true},
		{"grains.has_value", []any{"deep:nope"}, nil, false},
		{"grains.item", []any{"os", "deep:nested:key", "nope"}, nil,
			ordered.FromPairs("os", "Debian", "deep:nested:key", "found-it", "nope", "")},
		{"grains.item", []any{"host", "serialnumber"}, ordered.FromPairs("sanitize", true),
			ordered.FromPairs("host", "MINION", "serialnumber", "ABCDEFXX")},
		{"grains.ls", nil, nil, []any{"deep", "host", "id", "os", "os_family", "ports", "roles", "serialnumber"}},
		{"grains.equals", []any{"os", "Debian"}, nil, true},
		{"grains.filter_by", []any{ordered.FromPairs("Debian", "apt", "RedHat", "yum")}, nil, "apt"},
		{"grains.filter_by", []any{ordered.FromPairs("Deb*", "apt", "default", "x")}, nil, "apt"},
		{"grains.filter_by", []any{ordered.FromPairs("RedHat", "yum", "default", "x")}, nil, "x"},
		{"grains.filter_by", []any{ordered.FromPairs("web", "w", "db", "d"), "roles"}, nil, "w"},
		{"grains.filter_by", []any{
			ordered.FromPairs("common", ordered.FromPairs("a", 1, "b", 1), "Debian", ordered.FromPairs("b", 2)),
		}, ordered.FromPairs("base", "common", "merge", ordered.FromPairs("c", 3)),
			ordered.FromPairs("a", 1, "b", 2, "c", 3)},
	}
	for _, tt := range tests {
		t.Run(tt.fun, func(t *testing.T) {
			got, err := newEnv(t).Run(context.Background(), tt.fun, tt.args, tt.kwargs)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmpMap); diff != "" {
				t.Errorf("%s %v (-want +got):\n%s", tt.fun, tt.args, diff)
			}
		})
	}
}

func TestWrite(t *testing.T) {
	env := newEnv(t)
	ctx := context.Background()
	path := coregrains.GrainsFilePath(env.Opts)
	steps := []struct {
		fun    string
		args   []any
		kwargs *ordered.Map
		want   any
	}{
		{"grains.setval", []any{"role", "web"}, nil, ordered.FromPairs("role", "web")},
		{"grains.setvals", []any{ordered.FromPairs("a", 1, "b", []any{"x"})}, nil, ordered.FromPairs("a", 1, "b", []any{"x"})},
		{"grains.append", []any{"b", "y"}, nil, ordered.FromPairs("b", []any{"x", "y"})},
		{"grains.append", []any{"b", "y"}, nil, "The val y was already in the list b"},
		{"grains.append", []any{"role", "z"}, nil, "The key role is not a valid list"},
		{"grains.append", []any{"app:tags", "t1"}, nil, ordered.FromPairs("app", ordered.FromPairs("tags", []any{"t1"}))},
		{"grains.remove", []any{"b", "x"}, nil, ordered.FromPairs("b", []any{"y"})},
		{"grains.remove", []any{"b", "q"}, nil, "The val q was not in the list b"},
		{"grains.set", []any{"app:name", "shop"}, nil, ordered.FromPairs("comment", "", "changes",
			ordered.FromPairs("app", ordered.FromPairs("tags", []any{"t1"}, "name", "shop")), "result", true)},
		{"grains.set", []any{"app:name", "shop"}, nil, ordered.FromPairs("comment", "Grain is already set", "changes", ordered.New(), "result", true)},
		{"grains.set", []any{"app", "flat"}, nil, ordered.FromPairs("comment",
			"The key 'app' exists but is a dict or a list. Use 'force=True' to overwrite.", "changes", ordered.New(), "result", false)},
		{"grains.delval", []any{"a"}, nil, ordered.FromPairs("comment", "", "changes", ordered.FromPairs("a", nil), "result", true)},
		{"grains.delkey", []any{"role"}, nil, ordered.FromPairs("comment", "", "changes", ordered.FromPairs("role", nil), "result", true)},
	}
	for _, s := range steps {
		got, err := env.Run(ctx, s.fun, s.args, s.kwargs)
		if err != nil {
			t.Fatalf("%s %v: %v", s.fun, s.args, err)
		}
		if diff := cmp.Diff(s.want, got, cmpMap); diff != "" {
			t.Errorf("%s %v (-want +got):\n%s", s.fun, s.args, diff)
		}
	}
	file, err := coregrains.LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := ordered.FromPairs("a", nil, "b", []any{"y"}, "app", ordered.FromPairs("tags", []any{"t1"}, "name", "shop"))
	if diff := cmp.Diff(want, file, cmpMap); diff != "" {
		t.Errorf("grains file (-want +got):\n%s", diff)
	}
	if env.Grains().Has("role") || env.Grains().Value("a") != nil || !env.Grains().Has("a") {
		t.Errorf("job grains not updated: %v", env.Grains())
	}
	raw, _ := os.ReadFile(filepath.Clean(path))
	if len(raw) == 0 || raw[0] == '{' {
		t.Errorf("grains file is not block YAML:\n%s", raw)
	}
}

func TestFnmatch(t *testing.T) {
	for _, tt := range []struct {
		pat, name string
		want      bool
	}{
		{"Deb*", "Debian", true}, {"*", "a/b", true}, {"?ed", "Red", true}, {"[RD]*", "Debian", true},
		{"[!R]*", "Red", false}, {"deb*", "Debian", false}, {"a[", "a[", true},
	} {
		if got := Fnmatch(tt.pat, tt.name); got != tt.want {
			t.Errorf("Fnmatch(%q, %q) = %v", tt.pat, tt.name, got)
		}
	}
}
