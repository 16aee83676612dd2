package pillar

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/saltyaml"
	"github.com/brinesalt/brine/internal/txtar"
	"github.com/brinesalt/brine/state/compile"
	"github.com/brinesalt/brine/state/fileclient"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func yamlRender(_ context.Context, src []byte, rel, _, _ string) (any, error) {
	v, err := saltyaml.Load(src, rel)
	if err != nil {
		return nil, err
	}
	if v == nil {
		return ordered.New(), nil
	}
	return v, nil
}

func loadYAML(t *testing.T, s, name string) *ordered.Map {
	t.Helper()
	v, err := saltyaml.Load([]byte(s), name)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := v.(*ordered.Map)
	if m == nil {
		m = ordered.New()
	}
	return m
}

// staticExt is a test external pillar returning its keyword arguments,
// or its one positional argument when that is a mapping.
var staticExt = ExtPillar{Name: "static", VarArgs: true, VarKw: true, Fn: func(_ context.Context, x *ExtCall) (any, error) {
	if len(x.VarArgs) == 1 {
		return x.VarArgs[0], nil
	}
	return x.Kwargs, nil
}}

// echoExt returns the pillar it was given, under "seen".
var echoExt = ExtPillar{Name: "echo", VarArgs: true, Fn: func(_ context.Context, x *ExtCall) (any, error) {
	return ordered.FromPairs("seen", ordered.DeepCopy(x.Pillar)), nil
}}

func goldenRegistry() *ExtRegistry {
	r := NewExtRegistry()
	r.Register(staticExt)
	r.Register(echoExt)
	r.Register(CmdYAML)
	r.Register(CmdJSON)
	return r
}

// compileArchive compiles the pillar of one golden archive: <env>/...
// sections are pillar_roots files, opts.yaml the master options and
// override.yaml the pillar= override.
func compileArchive(t *testing.T, a txtar.Archive) string {
	t.Helper()
	dir := t.TempDir()
	roots := map[string][]string{}
	c := &Compiler{Render: yamlRender, MinionID: "minion", Ext: goldenRegistry(),
		Match: func(tgt any, _ string) (bool, error) { return compile.Fnmatch("minion", ordered.KeyString(tgt)), nil }}
	for _, f := range a.Files {
		switch f.Name {
		case "opts.yaml":
			c.Opts = loadYAML(t, f.Data, f.Name)
			continue
		case "override.yaml":
			c.Override = loadYAML(t, f.Data, f.Name)
			continue
		case "want.json":
			continue
		}
		env, _, _ := strings.Cut(f.Name, "/")
		roots[env] = []string{filepath.Join(dir, env)}
		p := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(f.Data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c.Files = fileclient.New(roots, nil)
	if pe, ok := c.Opts.Value("pillarenv").(string); ok {
		c.Saltenv = pe
	}
	p, err := c.Compile(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(p); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestMergeGolden compiles each testdata/merge/*.txtar and compares the
// pillar with its want.json section. Run with -update to rewrite them.
func TestMergeGolden(t *testing.T) {
	paths, _ := filepath.Glob("testdata/merge/*.txtar")
	if len(paths) == 0 {
		t.Fatal("no golden files")
	}
	for _, p := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(p), ".txtar"), func(t *testing.T) {
			raw, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			a := txtar.Parse(string(raw))
			got := compileArchive(t, a)
			at := -1
			for i, f := range a.Files {
				if f.Name == "want.json" {
					at = i
				}
			}
			if *update {
				if at < 0 {
					a.Files = append(a.Files, txtar.File{Name: "want.json"})
					at = len(a.Files) - 1
				}
				a.Files[at].Data = got
				if err := os.WriteFile(p, []byte(a.Format()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if at < 0 {
				t.Fatal("no want.json section; run with -update")
			}
			if diff := cmp.Diff(a.Files[at].Data, got); diff != "" {
				t.Errorf("pillar mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
