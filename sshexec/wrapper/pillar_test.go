package wrapper

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/saltyaml"
	"github.com/brinesalt/brine/roster"
	"github.com/brinesalt/brine/sshexec"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/states"
)

// TestPlanPillar answers the functions of Salt's salt-ssh pillar wrapper
// on the controller, from the pillar compiled for the host (targeted by
// its grains and id in the top file), with the wrapper's shapes: get with
// default, delimiter and merge, item without traversal, items as raw,
// keys, filter_by, and run_wfunc's messages for bad calls.
func TestPlanPillar(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"top.sls": "base:\n  '*':\n    - common\n  'G@os:Debian':\n    - match: compound\n    - debian\n  other:\n    - other\n",
		"common.sls": "app:\n  db: {host: h, port: 5432}\n  list: [a, {k: v}, c]\n" +
			"role: web\n1: one\nsite: {name: s, tags: [x]}\nid_seen: {{ grains['id'] }}\n",
		"debian.sls": "family: debian\n",
		"other.sls":  "secret: not-for-web1\n",
	})
	s := &States{Opts: ordered.FromPairs("pillar_roots", ordered.FromPairs("base", []any{root})),
		States: states.NewRegistry(), Funcs: modules.NewRegistry()}
	h := &sshexec.Host{Target: &roster.Target{ID: "web1"},
		Grains: func(context.Context) (*ordered.Map, error) {
			return ordered.FromPairs("id", "web1", "os", "Debian"), nil
		},
		Call: func(_ context.Context, fun string, _ []any, _ *ordered.Map) (any, int, error) {
			t.Errorf("%s ran on the host", fun)
			return nil, 0, nil
		}}
	whole := `{"app":{"db":{"host":"h","port":5432},"list":["a",{"k":"v"},"c"]},"role":"web","1":"one","site":{"name":"s","tags":["x"]},"id_seen":"web1","family":"debian"}`
	for _, tt := range []struct {
		fun  string
		args []string // as on the command line
		want string   // JSON of the return
		rc   int
	}{
		{"pillar.items", nil, whole, 0},
		{"pillar.data", nil, whole, 0},
		{"pillar.raw", nil, whole, 0},
		{"pillar.items", []string{"role"}, `"web"`, 0},
		{"pillar.raw", []string{"key=app"}, `{"db":{"host":"h","port":5432},"list":["a",{"k":"v"},"c"]}`, 0},
		{"pillar.raw", []string{"nothing"}, `{}`, 0},
		{"pillar.get", []string{"role"}, `"web"`, 0},
		{"pillar.get", []string{"app:db:port"}, `5432`, 0},
		{"pillar.get", []string{"app:list:1:k"}, `"v"`, 0},
		{"pillar.get", []string{"app:list:-1"}, `"c"`, 0},
		{"pillar.get", []string{"'1'"}, `"one"`, 0},
		{"pillar.get", []string{"secret"}, `""`, 0},
		{"pillar.get", []string{"secret", "fallback"}, `"fallback"`, 0},
		{"pillar.get", []string{"app.db.host", "delimiter=."}, `"h"`, 0},
		{"pillar.get", []string{"app:db:host", "delimiter=."}, `""`, 0},
		{"pillar.get", []string{"site", "{name: d, extra: e}", "merge=True"}, `{"name":"s","extra":"e","tags":["x"]}`, 0},
		{"pillar.get", []string{"nothing", "{a: 1}", "merge=True"}, `{"a":1}`, 0},
		{"pillar.get", []string{"role", "{a: 1}", "merge=True"}, `"web"`, 0},
		{"pillar.get", []string{"site:tags", "[y]", "merge=True"}, `["x"]`, 0},
		{"pillar.item", []string{"role", "family", "app:db", "secret"}, `{"role":"web","family":"debian"}`, 0},
		{"pillar.keys", []string{"app"}, `["db","list"]`, 0},
		{"pillar.keys", []string{"app:db"}, `["host","port"]`, 0},
		{"pillar.filter_by", []string{"{web: W, db: D, default: X}", "role"}, `"W"`, 0},
		{"pillar.filter_by", []string{"{db: D, default: X}", "role"}, `"X"`, 0},
		{"pillar.filter_by", []string{"{'w*': {a: 1}, base: {a: 0, b: 2}}", "role", "base=base"}, `{"a":1,"b":2}`, 0},
		{"pillar.keys", []string{"role"}, `"An Exception occurred while executing pillar.keys: Pillar value in key role is not a dict"`, 1},
		{"pillar.keys", []string{"nothing"}, `"An Exception occurred while executing pillar.keys: 'Pillar key not found: nothing'"`, 1},
		{"pillar.get", nil, `"TypeError encountered executing pillar.get: get() missing 1 required positional argument: 'key'"`, 1},
		{"pillar.items", []string{"pillar={x: 1}"}, `"TypeError encountered executing pillar.items: raw() got an unexpected keyword argument 'pillar'"`, 1},
	} {
		t.Run(tt.fun+" "+strings.Join(tt.args, " "), func(t *testing.T) {
			args, kwargs := saltyaml.ParseInput(tt.args)
			plan, err := s.PlanPillar(tt.fun, args, kwargs)(context.Background(), h)
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(plan.Return)
			if err != nil {
				t.Fatal(err)
			}
			if !plan.Done || string(got) != tt.want || plan.Retcode != tt.rc {
				t.Errorf("%s %s = %s (retcode %d, done %v), want %s (retcode %d)", tt.fun, tt.args, got, plan.Retcode, plan.Done, tt.want, tt.rc)
			}
		})
	}
}

// TestIsPillar names the functions of Salt's wrapper, and only those:
// pillar.ls and pillar.ext are not in it, so they run on the host.
func TestIsPillar(t *testing.T) {
	for fun, want := range map[string]bool{
		"pillar.get": true, "pillar.item": true, "pillar.items": true, "pillar.raw": true,
		"pillar.keys": true, "pillar.filter_by": true, "pillar.data": true,
		"pillar.ls": false, "pillar.ext": false, "grains.get": false, "state.apply": false,
	} {
		if got := IsPillar(fun); got != want {
			t.Errorf("IsPillar(%q) = %v, want %v", fun, got, want)
		}
	}
}

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(root, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
