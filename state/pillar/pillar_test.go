package pillar

import (
	"context"
	"sort"
	"strings"
	"testing"

	"github.com/brinesalt/brine/state/compile"
	"github.com/brinesalt/brine/state/ordered"
	"github.com/brinesalt/brine/state/saltyaml"
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
