package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brinesalt/brine/internal/testsupport/clustertest"
	"github.com/google/go-cmp/cmp"
)

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(root, rel)
		os.MkdirAll(filepath.Dir(p), 0o700)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// jsonRun runs a tool with --out json and decodes the answer.
func jsonRun(t *testing.T, c *clustertest.Cluster, tool string, args ...string) any {
	t.Helper()
	out, code := c.Run(tool, append(args, "--out", "json")...)
	var v any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("%s %v: exit %d: %v\n%s", tool, args, code, err, out)
	}
	return v
}

// TestE2EMine runs two Brine minions: db1 fills the mine from
// mine_functions in its config and in its pillar when it starts, and
// web1 reads db1's entries in a template (salt['mine.get']) and from the
// command line; functions that do not exist are left out; mine.send, mine.valid, mine.delete and mine.flush change
// db1's mine as Salt's do.
func TestE2EMine(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a master and two minions")
	}
	c := clustertest.New(t, "auto_accept: True\n")
	writeFiles(t, c.Dir, map[string]string{
		"srv/pillar/top.sls":  "base:\n  'db*':\n    - mine\n",
		"srv/pillar/mine.sls": "mine_functions:\n  from_pillar:\n    mine_function: test.echo\n    text: pillar says hi\n",
		"srv/salt/app.sls": `{% set dbs = salt['mine.get']('db*', 'db_id') %}
app_conf:
  file.managed:
    - name: {{ opts['cachedir'] }}/app.conf
    - contents: "db={{ dbs['db1'] }} ping={{ salt['mine.get']('db1', 'test.ping')['db1'] }}"
`,
	})
	db := c.MinionConf("db1", "db1", "mine_functions:\n  test.ping: []\n  db_id:\n    - mine_function: grains.get\n    - id\n  missing_fun: [nope.nothing]\n  nope.nothing: []\n")
	web := c.MinionConf("web1", "web1", "mine_enabled: False\n")
	c.StartMinion("db1", db)
	c.StartMinion("web1", web)
	c.PingUntil("*", "db1", "web1")
	c.WaitFor("db1's mine at start", func() bool {
		out, _ := c.Run("salt", "web1", "mine.get", "db1", "db_id,from_pillar", "--out", "json")
		return strings.Contains(out, `"pillar says hi"`) && strings.Contains(out, `"db_id": {`)
	})
	got := jsonRun(t, c, "salt", "web1", "mine.get", "*", "db_id")
	if d := cmp.Diff(map[string]any{"web1": map[string]any{"db1": "db1"}}, got); d != "" {
		t.Errorf("mine.get (-want +got):\n%s", d)
	}
	out, code := c.Run("salt", "web1", "state.apply", "app")
	conf, _ := os.ReadFile(filepath.Join(web, "cache", "app.conf"))
	if code != 0 || strings.TrimSpace(string(conf)) != "db=db1 ping=True" {
		t.Fatalf("state with mine.get: exit %d, app.conf %q\n%s", code, conf, out)
	}
	got = jsonRun(t, c, "salt", "db1", "mine.valid")
	want := map[string]any{"db1": map[string]any{"test.ping": []any{}, "db_id": map[string]any{"grains.get": []any{"id"}},
		"from_pillar": map[string]any{"test.echo": []any{map[string]any{"text": "pillar says hi"}}}}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("mine.valid (-want +got):\n%s", d)
	}
	// mine.send with an allow_tgt ACL: web1 may read it, db1 may not.
	got = jsonRun(t, c, "salt", "db1", "mine.send", "secret", "mine_function=test.echo", "text=s3cret", "allow_tgt=web1")
	if d := cmp.Diff(map[string]any{"db1": true}, got); d != "" {
		t.Errorf("mine.send: %s", d)
	}
	if got := jsonRun(t, c, "salt", "web1", "mine.get", "db1", "secret"); cmp.Diff(map[string]any{"web1": map[string]any{"db1": "s3cret"}}, got) != "" {
		t.Errorf("mine.get with the ACL allowing: %v", got)
	}
	if got := jsonRun(t, c, "salt", "db1", "mine.get", "db1", "secret"); cmp.Diff(map[string]any{"db1": map[string]any{}}, got) != "" {
		t.Errorf("mine.get with the ACL refusing: %v", got)
	}
	jsonRun(t, c, "salt", "db1", "mine.delete", "db_id")
	if got := jsonRun(t, c, "salt", "web1", "mine.get", "db1", "db_id"); cmp.Diff(map[string]any{"web1": map[string]any{}}, got) != "" {
		t.Errorf("after mine.delete: %v", got)
	}
	jsonRun(t, c, "salt", "db1", "mine.flush")
	if got := jsonRun(t, c, "salt", "web1", "mine.get", "db1", "test.ping"); cmp.Diff(map[string]any{"web1": map[string]any{}}, got) != "" {
		t.Errorf("after mine.flush: %v", got)
	}
	jsonRun(t, c, "salt", "db1", "mine.update")
	if got := jsonRun(t, c, "salt", "web1", "mine.get", "db1", "test.ping"); cmp.Diff(map[string]any{"web1": map[string]any{"db1": true}}, got) != "" {
		t.Errorf("after mine.update: %v", got)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
