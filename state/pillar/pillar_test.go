package pillar

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/saltyaml"
	"github.com/brinesalt/brine/state/compile"
)

type memSource map[string]string

func (m memSource) Envs() []string { return []string{"base"} }
func (m memSource) ListStates(string) []string {
	var out []string
	for p := range m {
		out = append(out, strings.ReplaceAll(strings.TrimSuffix(p, ".sls"), "/", "."))
	}
	sort.Strings(out)
	return out
}
func (m memSource) FindSLS(_ context.Context, sls, _ string) (string, []byte, bool, error) {
	rel := strings.ReplaceAll(sls, ".", "/") + ".sls"
	s, ok := m[rel]
	return rel, []byte(s), ok, nil
}
func (m memSource) ReadFile(_ context.Context, rel, _ string) ([]byte, bool, error) {
	s, ok := m[rel]
	return []byte(s), ok, nil
}

func compilePillar(t *testing.T, files memSource, override *ordered.Map) string {
	t.Helper()
	c := &Compiler{Files: files, Override: override,
		Render: func(_ context.Context, src []byte, rel, _, _ string) (any, error) { return saltyaml.Load(src, rel) },
		Match:  func(tgt any, _ string) (bool, error) { return compile.Fnmatch("minion", ordered.KeyString(tgt)), nil },
	}
	p, err := c.Compile(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestCompile(t *testing.T) {
	tests := []struct {
		name     string
		files    memSource
		override *ordered.Map
		want     string
	}{{
		name: "files merge recursively in top order; lists are replaced",
		files: memSource{
			"top.sls":      "base:\n  '*':\n    - common\n    - override\n  'other':\n    - never\n",
			"common.sls":   "m: {a: 1, n: {keep: 1, r: c}}\nl: [1, 2]\n",
			"override.sls": "m: {b: 2, n: {r: o}}\nl: [3]\n",
			"never.sls":    "never: true\n",
		},
		want: `{"m":{"a":1,"n":{"keep":1,"r":"o"},"b":2},"l":[3]}`,
	}, {
		name: "includer wins over included; key nests an include",
		files: memSource{
			"top.sls":    "base:\n  '*':\n    - main\n",
			"main.sls":   "include:\n  - shared\n  - nested:\n      key: under\nv: main\n",
			"shared.sls": "v: shared\nonly: 1\n",
			"nested.sls": "inner: x\n",
		},
		want: `{"v":"main","only":1,"under":{"inner":"x"}}`,
	}, {
		name: "render errors and missing files go to _errors; override merges last",
		files: memSource{
			"top.sls":  "base:\n  '*':\n    - good\n    - bad\n    - absent\n",
			"good.sls": "g: {a: 1}\n",
			"bad.sls":  "a: [\n",
		},
		override: ordered.FromPairs("g", ordered.FromPairs("b", 2)),
		want: `{"g":{"b":2,"a":1},"_errors":["Rendering SLS 'bad' failed. Please see master log for details.",` +
			`"Specified SLS 'absent' in environment 'base' is not available on the salt master"]}`,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := compilePillar(t, tc.files, tc.override); got != tc.want {
				t.Errorf("pillar =\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestRenderErrorNamesFileAndLine(t *testing.T) {
	var logs bytes.Buffer
	c := &Compiler{Files: memSource{
		"top.sls": "base:\n  '*':\n    - bad\n",
		"bad.sls": "a: 1\nb: [\n",
	}, Log: slog.New(slog.NewTextHandler(&logs, nil)),
		Render: func(_ context.Context, src []byte, rel, _, _ string) (any, error) { return saltyaml.Load(src, rel) },
		Match:  func(any, string) (bool, error) { return true, nil },
	}
	p, err := c.Compile(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []any{"Rendering SLS 'bad' failed. Please see master log for details."}
	if diff := cmp.Diff(want, p.Value("_errors")); diff != "" {
		t.Errorf("_errors (-want +got):\n%s", diff)
	}
	for _, s := range []string{"Rendering SLS 'bad' failed, render error:", "file=bad.sls", "line=3"} {
		if !strings.Contains(logs.String(), s) {
			t.Errorf("log lacks %q:\n%s", s, logs.String())
		}
	}

	c.Opts = ordered.FromPairs("pillar_safe_render_error", false)
	p, err = c.Compile(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	errs, _ := p.Value("_errors").([]any)
	if len(errs) != 1 || !strings.Contains(errs[0].(string), `in "bad.sls", line 3`) {
		t.Errorf("unsafe _errors = %v, want the renderer's message with file and line", errs)
	}
}

func TestNewRenderError(t *testing.T) {
	_, yerr := saltyaml.Load([]byte("a: [\n"), "x/y.sls")
	tests := []struct {
		err        error
		file       string
		line       int
		errMessage string
	}{
		{yerr, "x/y.sls", 2, "render pillar SLS 'x.y' (x/y.sls, line 2): "},
		{errors.New("boom"), "x/y.sls", 0, "render pillar SLS 'x.y' (x/y.sls): boom"},
	}
	for _, tc := range tests {
		re := newRenderError("x.y", "base", "x/y.sls", tc.err)
		if re.File != tc.file || re.Line != tc.line || !strings.HasPrefix(re.Error(), tc.errMessage) || !errors.Is(re, tc.err) {
			t.Errorf("newRenderError(%v) = %+v (%q)", tc.err, re, re.Error())
		}
	}
}

// TestOneHostsErrorSparesAnother compiles two minions concurrently from
// one Compiler configuration: one minion's SLS fails to render (or
// panics the renderer), the other's pillar is whole.
func TestOneHostsErrorSparesAnother(t *testing.T) {
	files := memSource{
		"top.sls":    "base:\n  bad:\n    - bad\n    - panics\n  good:\n    - good\n",
		"bad.sls":    "a: [\n",
		"panics.sls": "x: 1\n",
		"good.sls":   "g: {ok: true}\n",
	}
	render := func(_ context.Context, src []byte, rel, _, _ string) (any, error) {
		if rel == "panics.sls" {
			panic("renderer bug")
		}
		return saltyaml.Load(src, rel)
	}
	compileFor := func(id string) (*ordered.Map, error) {
		c := &Compiler{Files: files, Render: render, MinionID: id,
			Match: func(tgt any, _ string) (bool, error) { return compile.Fnmatch(id, ordered.KeyString(tgt)), nil }}
		return c.Compile(context.Background())
	}
	var wg sync.WaitGroup
	got := make([]string, 2)
	for i, id := range []string{"bad", "good"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, err := compileFor(id)
			if err != nil {
				got[i] = "error: " + err.Error()
				return
			}
			b, _ := p.MarshalJSON()
			got[i] = string(b)
		}()
	}
	wg.Wait()
	want := []string{
		`{"_errors":["Rendering SLS 'bad' failed. Please see master log for details.","Rendering SLS 'panics' failed. Please see master log for details."]}`,
		`{"g":{"ok":true}}`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pillars (-want +got):\n%s", diff)
	}
}

func TestStrategyMergeDoesNotShare(t *testing.T) {
	a := ordered.FromPairs("m", ordered.FromPairs("x", 1))
	b := ordered.FromPairs("m", ordered.FromPairs("y", 2), "n", ordered.FromPairs("z", 3))
	for _, name := range []string{"smart", "recurse", "overwrite", "aggregate", "none", "list"} {
		out := Strategy{Name: name}.Merge(a, b)
		if m, ok := out.Value("m").(*ordered.Map); ok {
			m.Set("mutated", true)
		}
		if n, ok := out.Value("n").(*ordered.Map); ok {
			n.Set("mutated", true)
		}
		if a.Value("m").(*ordered.Map).Has("mutated") || b.Value("m").(*ordered.Map).Has("mutated") || b.Value("n").(*ordered.Map).Has("mutated") {
			t.Errorf("%s: the result shares mappings with its inputs", name)
		}
	}
}

func TestExtRegistryDuplicatePanics(t *testing.T) {
	r := NewExtRegistry()
	r.Register(ExtPillar{Name: "x"})
	defer func() {
		if recover() == nil {
			t.Error("duplicate registration did not panic")
		}
	}()
	r.Register(ExtPillar{Name: "x"})
}
