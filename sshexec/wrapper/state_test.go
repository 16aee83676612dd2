package wrapper

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/roster"
	"github.com/brinesalt/brine/sshexec"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/states"
)

func TestWalkRefs(t *testing.T) {
	high := ordered.FromPairs(
		"a", ordered.FromPairs("__env__", "base", "file", []any{"managed",
			ordered.FromPairs("source", []any{"salt://x/one.conf", "salt://x/two.conf?saltenv=prod"})}),
		"b", ordered.FromPairs("__env__", "dev", "cmd", []any{"script", ordered.FromPairs("source", "salt://s.sh")}),
		"c", ordered.FromPairs("file", []any{"managed", ordered.FromPairs("contents", "not salt://inside")}),
	)
	refs := map[string]map[string]bool{}
	walkRefs(high, "base", refs)
	want := map[string]map[string]bool{
		"base": {"x/one.conf": true},
		"prod": {"x/two.conf": true},
		"dev":  {"s.sh": true},
	}
	if diff := cmp.Diff(want, refs); diff != "" {
		t.Error(diff)
	}
}

// TestPlanSplitsWork plans state.sls for a fake host: grains come from
// the host, pillar.get runs on the controller, cmd.run in a template runs
// on the host, and only referenced files travel.
func TestPlanSplitsWork(t *testing.T) {
	root := t.TempDir()
	for name, body := range map[string]string{
		"web.sls":          "site:\n  file.managed:\n    - name: /tmp/x\n    - source: salt://files/site.conf\n    - contents_pillar: nothing\nhostname:\n  test.succeed_without_changes:\n    - name: {{ salt['cmd.run']('hostname') }}-{{ salt['pillar.get']('role', 'none') }}\n",
		"files/site.conf":  "site\n",
		"files/other.conf": "not referenced\n",
	} {
		p := filepath.Join(root, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(body), 0o644)
	}
	funcs := modules.NewRegistry()
	funcs.Register(modules.Function{Name: "cmd.run", Spec: modules.Spec{VarArgs: true, VarKw: true},
		Fn: func(context.Context, *modules.Call) (any, error) {
			t.Error("cmd.run ran on the controller")
			return nil, nil
		}})
	funcs.Register(modules.Function{Name: "pillar.get", Spec: modules.Spec{Params: []modules.Param{{Name: "key"}, {Name: "default", Optional: true}}},
		Fn: func(_ context.Context, c *modules.Call) (any, error) {
			if v, ok := c.Env.Pillar.Get(c.Str("key")); ok {
				return v, nil
			}
			return c.Arg("default"), nil
		}})
	var remote []string
	h := &sshexec.Host{Target: &roster.Target{ID: "web1"},
		Grains: func(context.Context) (*ordered.Map, error) {
			return ordered.FromPairs("id", "web1", "os", "Debian"), nil
		},
		Call: func(_ context.Context, fun string, args []any, _ *ordered.Map) (any, int, error) {
			remote = append(remote, fun)
			return "web1-host", 0, nil
		}}
	s := &States{Opts: ordered.FromPairs("file_roots", ordered.FromPairs("base", []any{root})), States: states.NewRegistry(), Funcs: funcs}
	plan, err := s.Plan("state.sls", []any{"web"}, ordered.New())(context.Background(), h)
	if err != nil {
		t.Fatal(err)
	}
	if plan.Done || plan.Fun != "state.high" || plan.Out != "highstate" {
		t.Fatalf("plan = %+v", plan)
	}
	if !cmp.Equal(remote, []string{"cmd.run"}) {
		t.Errorf("functions run on the host: %v", remote)
	}
	high, _ := plan.Arg[0].(*ordered.Map).MarshalJSON()
	if !strings.Contains(string(high), `"name":"web1-host-none"`) {
		t.Errorf("template did not see the host's answer and the controller's pillar: %s", high)
	}
	files := plan.Data.Value("files").(*ordered.Map).Value("base").(*ordered.Map)
	if diff := cmp.Diff([]string{"files/site.conf"}, files.StringKeys()); diff != "" {
		t.Errorf("shipped files: %s", diff)
	}
}
