package module

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/saltyaml"
	"github.com/brinesalt/brine/state/modules"
)

func yamlMap(t *testing.T, s string) *ordered.Map {
	t.Helper()
	v, err := saltyaml.Load([]byte(s), "test")
	if err != nil {
		t.Fatal(err)
	}
	if v == nil {
		return nil
	}
	return v.(*ordered.Map)
}

const memPillarYAML = `
app:
  db: {host: h}
  list: [a, {k: v}, c]
  ports: [80]
1: one
top: t
str: s
`

func testEnv(t *testing.T, opts string) *modules.Env {
	r := modules.NewRegistry()
	Register(r)
	o := yamlMap(t, opts)
	if o == nil {
		o = ordered.New()
	}
	return &modules.Env{Registry: r, Context: map[string]any{}, Opts: o, Pillar: yamlMap(t, memPillarYAML)}
}

func runJSON(t *testing.T, env *modules.Env, fun string, args []any, kw *ordered.Map) (string, error) {
	t.Helper()
	got, err := env.Run(context.Background(), fun, args, kw)
	if err != nil {
		return "", err
	}
	b, err := ordered.FromPairs("v", got).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(b[5 : len(b)-1]), nil
}

func TestFunctions(t *testing.T) {
	tests := []struct {
		name, fun, opts string
		args            []any
		kw              string
		want, wantErr   string
	}{
		{name: "get nested", fun: "pillar.get", args: []any{"app:db:host"}, want: `"h"`},
		{name: "get through a list index", fun: "pillar.get", args: []any{"app:list:2"}, want: `"c"`},
		{name: "get negative index", fun: "pillar.get", args: []any{"app:list:-1"}, want: `"c"`},
		{name: "get through an embedded mapping", fun: "pillar.get", args: []any{"app:list:k"}, want: `"v"`},
		{name: "get a YAML-loaded key", fun: "pillar.get", args: []any{"1"}, want: `"one"`},
		{name: "get into a string is missing", fun: "pillar.get", args: []any{"str:x"}, want: `""`},
		{name: "get missing gives empty string", fun: "pillar.get", args: []any{"app:nope"}, want: `""`},
		{name: "get missing with default", fun: "pillar.get", args: []any{"app:nope", "dflt"}, want: `"dflt"`},
		{name: "get missing with pillar_raise_on_missing", fun: "pillar.get", opts: "pillar_raise_on_missing: true",
			args: []any{"app:nope"}, wantErr: "KeyError: 'Pillar key not found: app:nope'"},
		{name: "explicit default wins over pillar_raise_on_missing", fun: "pillar.get", opts: "pillar_raise_on_missing: true",
			args: []any{"app:nope", "d"}, want: `"d"`},
		{name: "get with delimiter", fun: "pillar.get", args: []any{"app/db/host"}, kw: "delimiter: /", want: `"h"`},
		{name: "merge dict default", fun: "pillar.get", args: []any{"app:db"}, kw: "default: {port: 1, host: x}\nmerge: true",
			want: `{"port":1,"host":"h"}`},
		{name: "merge dict default, key missing", fun: "pillar.get", args: []any{"app:nope"}, kw: "default: {port: 1}\nmerge: true",
			want: `{"port":1}`},
		{name: "merge list default dedupes against the default", fun: "pillar.get", args: []any{"app:ports"},
			kw: "default: [80, 443]\nmerge: true", want: `[80,443]`},
		{name: "merge type mismatch falls back to the value", fun: "pillar.get", args: []any{"app:db"},
			kw: "default: [1]\nmerge: true", want: `{"host":"h"}`},
		{name: "merge_nested_lists", fun: "pillar.get", args: []any{"app"},
			kw:   "default: {ports: [443]}\nmerge: true\nmerge_nested_lists: true",
			want: `{"ports":[443,80],"db":{"host":"h"},"list":["a",{"k":"v"},"c"]}`},
		{name: "pillar_merge_lists option", fun: "pillar.get", opts: "pillar_merge_lists: true", args: []any{"app"},
			kw:   "default: {ports: [443]}\nmerge: true",
			want: `{"ports":[443,80],"db":{"host":"h"},"list":["a",{"k":"v"},"c"]}`},
		{name: "merge_nested_lists false beats the option", fun: "pillar.get", opts: "pillar_merge_lists: true", args: []any{"app:ports"},
			kw: "default: {}\nmerge: true\nmerge_nested_lists: false", want: `[80]`},
		{name: "item several keys with default", fun: "pillar.item", args: []any{"top", "app:db:host", "nope"},
			kw: "default: D", want: `{"top":"t","app:db:host":"h","nope":"D"}`},
		{name: "item missing is empty string", fun: "pillar.item", args: []any{"nope"}, want: `{"nope":""}`},
		{name: "items with keys is item", fun: "pillar.items", args: []any{"top", "app:db:host", "nope"},
			want: `{"top":"t","app:db:host":"h","nope":""}`},
		{name: "raw key is top-level only", fun: "pillar.raw", args: []any{"top"}, want: `"t"`},
		{name: "raw does not traverse", fun: "pillar.raw", args: []any{"app:db"}, want: `{}`},
		{name: "raw whole", fun: "pillar.raw", want: `{"app":{"db":{"host":"h"},"list":["a",{"k":"v"},"c"],"ports":[80]},"1":"one","top":"t","str":"s"}`},
		{name: "keys", fun: "pillar.keys", args: []any{"app"}, want: `["db","list","ports"]`},
		{name: "keys missing", fun: "pillar.keys", args: []any{"nope"}, wantErr: "KeyError: 'Pillar key not found: nope'"},
		{name: "keys of a non-dict", fun: "pillar.keys", args: []any{"top"}, wantErr: "ValueError: Pillar value in key top is not a dict"},
		{name: "ls with keys lists the keys asked for", fun: "pillar.ls", args: []any{"top", "nope"}, want: `["top","nope"]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := testEnv(t, tc.opts)
			var kw *ordered.Map
			if tc.kw != "" {
				kw = yamlMap(t, tc.kw)
			}
			got, err := runJSON(t, env, tc.fun, tc.args, kw)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("%s error = %v, want %q", tc.fun, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("%s %v = %s, want %s", tc.fun, tc.args, got, tc.want)
			}
		})
	}
}

// TestItemsCompiles checks pillar.items, pillar.ls and pillar.get with
// pillarenv against pillar_roots on disk.
func TestItemsCompiles(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, s string) {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("base/top.sls", "base:\n  '*':\n    - a\n")
	write("base/a.sls", "a: {x: 1}\nl: [1]\n")
	write("dev/top.sls", "dev:\n  '*':\n    - d\n")
	write("dev/d.sls", "d: dev\n")
	env := testEnv(t, "id: minion\npillar_roots:\n  base: ["+dir+"/base]\n  dev: ["+dir+"/dev]\n")
	tests := []struct {
		fun  string
		args []any
		kw   string
		want string
	}{
		{"pillar.items", nil, "", `{"a":{"x":1},"l":[1],"d":"dev"}`},
		{"pillar.items", nil, "pillar: {a: {y: 2}, l: [2]}", `{"a":{"y":2,"x":1},"l":[2],"d":"dev"}`},
		{"pillar.items", nil, "pillarenv: dev", `{"d":"dev"}`},
		{"pillar.ls", nil, "", `["a","l","d"]`},
		{"pillar.get", []any{"d"}, "pillarenv: dev", `"dev"`},
		{"pillar.get", []any{"a"}, "pillarenv: dev", `""`},
		{"pillar.item", []any{"d", "a"}, "pillarenv: dev", `{"d":"dev","a":""}`},
	}
	for _, tc := range tests {
		var kw *ordered.Map
		if tc.kw != "" {
			kw = yamlMap(t, tc.kw)
		}
		got, err := runJSON(t, env, tc.fun, tc.args, kw)
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("%s %v %s = %s, want %s", tc.fun, tc.args, tc.kw, got, tc.want)
		}
	}
}
