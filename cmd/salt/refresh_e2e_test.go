package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brinesalt/brine/internal/testsupport/clustertest"
)

// TestRefreshEndToEnd runs a master and two salt-minion daemons and
// changes m1's pillar and grains while they run: saltutil.refresh_pillar
// and grains.setval must reach the running minion, so pillar.get, the
// minion's own matching and the master's -G/-I targeting (through the
// minion data cache the _pillar request fills) see the new values
// without a restart, as Salt's do.
func TestRefreshEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemons")
	}
	c := clustertest.New(t, "auto_accept: True")
	c.StartMinion("m1", c.MinionConf("m1", "m1", ""))
	c.StartMinion("m2", c.MinionConf("m2", "m2", "grains: {role: db}"))
	c.PingUntil("*", "m1", "m2")
	pillar := filepath.Join(c.Dir, "srv/pillar")

	salt := func(args ...string) string {
		t.Helper()
		out, _ := c.Run("salt", args...)
		return out
	}
	want := func(out string, yes []string, no []string) {
		t.Helper()
		for _, w := range yes {
			if !strings.Contains(out, w) {
				t.Errorf("want %q in\n%s", w, out)
			}
		}
		for _, n := range no {
			if strings.Contains(out, n) {
				t.Errorf("want no %q in\n%s", n, out)
			}
		}
	}

	t.Run("refresh_pillar", func(t *testing.T) {
		os.WriteFile(filepath.Join(pillar, "top.sls"), []byte("base:\n  'G@role:web':\n    - match: compound\n    - web\n  m1:\n    - extra\n"), 0o600)
		os.WriteFile(filepath.Join(pillar, "extra.sls"), []byte("color: blue\n"), 0o600)
		// The running minion still has the pillar it started with.
		want(salt("m1", "pillar.get", "color"), []string{"m1:\n"}, []string{"blue"})
		want(salt("m1", "saltutil.refresh_pillar"), []string{"m1:\n    True"}, nil)
		want(salt("m1", "pillar.get", "color"), []string{"m1:\n    blue"}, nil)
		want(salt("-I", "color:blue", "test.ping"), []string{"m1:\n    True"}, []string{"m2:"})
	})

	t.Run("grains.setval", func(t *testing.T) {
		want(salt("-G", "role:web", "test.ping"), nil, []string{"m1:", "m2:"})
		want(salt("m1", "grains.setval", "role", "web"), []string{"m1:\n    ----------\n    role:\n        web"}, nil)
		want(salt("m1", "grains.get", "role"), []string{"m1:\n    web"}, nil)
		want(salt("-G", "role:web", "test.ping"), []string{"m1:\n    True"}, []string{"m2:"})
		// The grain put m1 under the pillar top's G@role:web.
		want(salt("m1", "pillar.get", "site"), []string{"m1:\n    m1.example"}, nil)
		want(salt("-I", "site:m1.example", "test.ping"), []string{"m1:\n    True"}, []string{"m2:"})
		want(salt("-N", "webs", "test.ping"), []string{"m1:\n    True"}, []string{"m2:"})
	})

	t.Run("keyword arguments published as Salt's CLI does", func(t *testing.T) {
		out := salt("m1", "test.arg", "a", "test=True", "--out=json")
		var v map[string]struct {
			Args   []any          `json:"args"`
			Kwargs map[string]any `json:"kwargs"`
		}
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Fatalf("test.arg: %v\n%s", err, out)
		}
		if got := v["m1"]; len(got.Args) != 1 || got.Args[0] != "a" || got.Kwargs["test"] != true {
			t.Fatalf("test.arg a test=True = %+v, want args [a] and test True", got)
		}
		if got := listedArgs(t, c, "test.arg"); got != `["a",{"__kwarg__":true,"test":true}]` {
			t.Fatalf("jobs.list_jobs Arguments of test.arg = %s", got)
		}
	})

	t.Run("salt-run jobs are listed", func(t *testing.T) {
		if out, code := c.Run("salt-run", "manage.up"); code != 0 {
			t.Fatalf("manage.up: %d %s", code, out)
		}
		if got := listedArgs(t, c, "runner.manage.up"); got != `[]` {
			t.Fatalf("jobs.list_jobs Arguments of runner.manage.up = %s", got)
		}
	})
}

// listedArgs returns, as JSON, the Arguments jobs.list_jobs shows for
// the job running fun, failing when it lists none.
func listedArgs(t *testing.T, c *clustertest.Cluster, fun string) string {
	t.Helper()
	out, _ := c.Run("salt-run", "jobs.list_jobs", "--out=json")
	var jobs map[string]struct {
		Function  string
		Arguments json.RawMessage
	}
	if err := json.Unmarshal([]byte(out), &jobs); err != nil {
		t.Fatalf("jobs.list_jobs: %v\n%s", err, out)
	}
	for _, j := range jobs {
		if j.Function == fun {
			var v any
			json.Unmarshal(j.Arguments, &v)
			b, _ := json.Marshal(v)
			return string(b)
		}
	}
	t.Fatalf("jobs.list_jobs lists no %s:\n%s", fun, out)
	return ""
}
