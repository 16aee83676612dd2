package apply

import (
	"context"
	_ "github.com/brinesalt/brine/state/coregrains/grainsyaml" // grains files (state.disable keeps its list there)
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/saltyaml"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/states"
	"github.com/brinesalt/brine/state/states/teststate"
)

// tree writes files under a temp dir and returns it.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for rel, data := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

type fixture struct {
	reg    *modules.Registry
	states *states.Registry
	env    *modules.Env
}

func newFixture(t *testing.T, salt, pillar map[string]string) *fixture {
	t.Helper()
	st := states.NewRegistry()
	teststate.Register(st)
	reg := modules.NewRegistry()
	Register(reg, st)
	opts := ordered.FromPairs("id", "minion",
		"file_roots", ordered.FromPairs("base", []any{tree(t, salt)}),
		"pillar_roots", ordered.FromPairs("base", []any{tree(t, pillar)}))
	env := (&modules.Env{Opts: opts,
		Registry: reg, Context: map[string]any{}}).WithGrains(ordered.FromPairs("id", "minion", "role", "web"))
	return &fixture{reg: reg, states: st, env: env}
}

// call runs fun with CLI-style arguments and returns the return, as
// JSON, and the retcode.
func (f *fixture) call(t *testing.T, fun string, argv ...string) (string, int, error) {
	t.Helper()
	pos, kw := saltyaml.ParseInput(argv)
	f.env.Context = map[string]any{}
	ret, err := f.env.Run(context.Background(), fun, pos, kw)
	if err != nil {
		return "", 0, err
	}
	rc, _ := f.env.Context["retcode"].(int)
	b, err := ordered.FromPairs("r", ret).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(b), rc, nil
}

func TestStateFunctions(t *testing.T) {
	salt := map[string]string{
		"top.sls":   "base:\n  '*':\n    - a\n  'role:web':\n    - match: grain\n    - b\n",
		"a.sls":     "a_state:\n  test.succeed_with_changes: []\n",
		"b.sls":     "b_state:\n  test.fail_without_changes: []\n",
		"empty.sls": "",
		"bad.sls":   "x: [\n",
		"p.sls":     "p_state:\n  test.show_notification:\n    - text: {{ pillar['k'] }}\n",
		"ext.sls":   "extend:\n  nothere:\n    test:\n      - nop\n",
		"reqs.sls":  "a:\n  test.nop:\n    - require:\n        x: 1\nb:\n  test.nop:\n    - watch:\n        y: 1\n",
	}
	f := newFixture(t, salt, map[string]string{"top.sls": "base:\n  '*':\n    - data\n", "data.sls": "k: from-pillar\n"})
	tests := []struct {
		fun      string
		args     []string
		contains []string
		rc       int
	}{
		{"state.apply", nil, []string{`"test_|-a_state_|-a_state_|-succeed_with_changes"`, `"result":false`}, 2},
		{"state.apply", []string{"a"}, []string{`"result":true`}, 0},
		{"state.apply", []string{"a", "test=True"}, []string{`"result":null`}, 0},
		{"state.sls", []string{"a,b"}, []string{"a_state", "b_state"}, 2},
		{"state.sls", []string{"empty"}, []string{`{"r":{}}`}, 2},
		{"state.sls", []string{"missing"}, []string{"No matching sls found for 'missing' in env 'base'"}, 1},
		{"state.sls", []string{"bad"}, []string{"Rendering SLS 'base:bad' failed"}, 1},
		{"state.sls", []string{"ext"}, []string{`{"r":["Cannot extend ID 'nothere' in 'base:ext'. It is not part of the high state.\n`}, 1},
		{"state.sls", []string{"reqs"}, []string{`{"r":["The require statement in state 'a' in SLS 'reqs' needs to be formed as a list","The watch statement in state 'b' in SLS 'reqs' needs to be formed as a list"]}`}, 1},
		{"state.sls", []string{"p"}, []string{`"comment":"from-pillar"`}, 0},
		{"state.sls", []string{"p", `pillar={"k": "over"}`}, []string{`"comment":"over"`}, 0},
		{"state.sls", []string{"a,b", `exclude=[{"id": "b_state"}]`}, []string{"a_state"}, 0},
		{"state.show_top", nil, []string{`{"r":{"base":["a","b"]}}`}, 0},
		{"state.show_sls", []string{"a"}, []string{`"test":["succeed_with_changes",{"order":10000}]`, `"__env__":"base"`}, 0},
		{"state.single", []string{"test.succeed_with_changes", "name=x"}, []string{"test_|-x_|-x_|-succeed_with_changes"}, 0},
		{"state.single", []string{"test.nop", "name=yes"}, []string{"ID 'True' is not formed as a string, but is a bool"}, 1},
		{"state.sls_id", []string{"a_state", "a"}, []string{"a_state"}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.fun+" "+strings.Join(tc.args, " "), func(t *testing.T) {
			got, rc, err := f.call(t, tc.fun, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range tc.contains {
				if !strings.Contains(got, c) {
					t.Errorf("return %s\nlacks %s", got, c)
				}
			}
			if rc != tc.rc {
				t.Errorf("retcode = %d, want %d", rc, tc.rc)
			}
		})
	}
}

func TestPillarFailureStopsStateRuns(t *testing.T) {
	f := newFixture(t, map[string]string{"top.sls": "base:\n  '*':\n    - a\n", "a.sls": "a:\n  test.nop: []\n"},
		map[string]string{"top.sls": "base:\n  '*':\n    - bad\n", "bad.sls": "x: [\n"})
	got, rc, err := f.call(t, "state.apply")
	if err != nil {
		t.Fatal(err)
	}
	want := `{"r":["Pillar failed to render with the following messages:","Rendering SLS 'bad' failed. Please see master log for details."]}`
	if got != want || rc != 5 {
		t.Errorf("state.apply = %s rc %d, want %s rc 5", got, rc, want)
	}
}

func TestInvalidStateKeywordIsAnError(t *testing.T) {
	f := newFixture(t, map[string]string{"c.sls": "c:\n  test.configurable_test_state:\n    - bogus: 1\n"}, nil)
	if _, _, err := f.call(t, "state.sls", "c"); err == nil || !strings.Contains(err.Error(), "'bogus' is an invalid keyword argument") {
		t.Fatalf("err = %v", err)
	}
}
