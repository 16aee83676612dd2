package compile

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/saltyaml"
	"github.com/brinesalt/brine/internal/txtar"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// memSource is an in-memory file server for saltenv base.
type memSource map[string]string

func (m memSource) Envs() []string { return []string{"base"} }

func (m memSource) ListStates(string) []string {
	var out []string
	for p := range m {
		if !strings.HasSuffix(p, ".sls") {
			continue
		}
		n := strings.TrimSuffix(p, ".sls")
		n = strings.TrimSuffix(n, "/init")
		out = append(out, strings.ReplaceAll(n, "/", "."))
	}
	sort.Strings(out)
	return out
}

func (m memSource) FindSLS(_ context.Context, sls, _ string) (string, []byte, bool, error) {
	base := strings.ReplaceAll(sls, ".", "/")
	for _, rel := range []string{base + ".sls", base + "/init.sls"} {
		if s, ok := m[rel]; ok {
			return rel, []byte(s), true, nil
		}
	}
	return "", nil, false, nil
}

func (m memSource) ReadFile(_ context.Context, rel, _ string) ([]byte, bool, error) {
	s, ok := m[rel]
	return []byte(s), ok, nil
}

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

func globMatch(tgt any, _ string) (bool, error) { return Fnmatch("minion", str(tgt)), nil }

// lowstate compiles the highstate of files as state.show_lowstate does.
func lowstate(t *testing.T, files memSource) string {
	t.Helper()
	ctx := context.Background()
	hs := NewHighState(files, yamlRender, globMatch)
	top, err := hs.GetTop(ctx)
	if err != nil {
		t.Fatal(err)
	}
	matches, err := hs.TopMatches(top)
	if err != nil {
		t.Fatal(err)
	}
	high, errs := hs.RenderHighstate(ctx, matches)
	errs = append(errs, ReconcileExtend(high, false)...)
	errs = append(errs, VerifyHigh(high)...)
	errs = append(errs, RequisiteIn(high)...)
	ApplyExclude(high)
	var out any = errs
	if len(errs) == 0 {
		out = CompileHigh(high)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestLowstateGolden compiles each testdata/lowstate/*.txtar (its SLS
// files) and compares the low chunks, or the compile errors, with the
// archive's lowstate.json section. Run with -update to rewrite them.
func TestLowstateGolden(t *testing.T) {
	paths, _ := filepath.Glob("testdata/lowstate/*.txtar")
	if len(paths) == 0 {
		t.Fatal("no golden files")
	}
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			raw, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			a := txtar.Parse(string(raw))
			files := memSource{}
			want, at := "", -1
			for i, f := range a.Files {
				if f.Name == "lowstate.json" {
					want, at = f.Data, i
					continue
				}
				files[f.Name] = f.Data
			}
			got := lowstate(t, files)
			if *update {
				if at < 0 {
					a.Files = append(a.Files, txtar.File{Name: "lowstate.json"})
					at = len(a.Files) - 1
				}
				a.Files[at].Data = got
				if err := os.WriteFile(p, []byte(a.Format()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("lowstate mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
