package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brinesalt/brine/internal/testsupport/clustertest"
)

// writeTree writes files (path relative to root: content) under root.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// TestE2EReactorAcceptsAndHighstates is Salt's canonical reactor: a new
// minion's pending key (salt/auth, act pend) is accepted by a wheel
// reaction, and its salt/minion/<id>/start event applies its highstate
// through a local reaction. A reaction SLS that fails to render is
// logged with its tag and file, and the other reactions still run.
func TestE2EReactorAcceptsAndHighstates(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a master and a minion")
	}
	c := clustertest.New(t, `reactor:
  - 'salt/auth':
    - salt://reactor/accept.sls
  - 'salt/minion/*/start':
    - salt://reactor/broken.sls
    - salt://reactor/highstate.sls
  - 'salt/custom/*':
    - salt://reactor/broken.sls
reactor_worker_threads: 2
reactor_worker_hwm: 100
`)
	writeTree(t, filepath.Join(c.Dir, "srv/salt"), map[string]string{
		"reactor/accept.sls": `{% if data['act'] == 'pend' and data['id'].startswith('web') %}
accept_{{ data['id'] }}:
  wheel.key.accept:
    - args:
      - match: {{ data['id'] }}
{% endif %}
`,
		"reactor/highstate.sls": `highstate_{{ data['id'] }}:
  local.state.apply:
    - tgt: {{ data['id'] }}
    - args:
      - pillar: {started_by: '{{ tag }}'}
`,
		"reactor/broken.sls": "oops: {{ data['no_such_key'] }}\n",
		"top.sls":            "base:\n  '*':\n    - marker\n",
		"marker.sls": `marker:
  file.managed:
    - name: {{ opts['cachedir'] }}/highstate-ran
    - contents: "{{ pillar.get('started_by', 'none') }}"
`,
	})
	out, code := c.Run("salt-run", "reactor.list", "--out", "json")
	if code != 0 || !strings.Contains(out, `"salt/auth": [`) || !strings.Contains(out, "salt://reactor/highstate.sls") {
		t.Fatalf("reactor.list: exit %d\n%s", code, out)
	}
	dir := c.MinionConf("web1", "web1", "")
	c.StartMinion("web1", dir)
	marker := filepath.Join(dir, "cache", "highstate-ran")
	c.WaitFor("the highstate the reactor applied", func() bool {
		b, err := os.ReadFile(marker)
		return err == nil && strings.TrimSpace(string(b)) == "salt/minion/web1/start"
	})
	keys, _ := c.Run("salt-key", "-L")
	if !strings.Contains(keys, "Accepted Keys:\nweb1") {
		t.Errorf("web1 not accepted by the reactor:\n%s", keys)
	}
	log := c.Logs["master"].String()
	for _, want := range []string{"Failed to render", "tag=salt/minion/web1/start", "broken.sls"} {
		if !strings.Contains(log, want) {
			t.Errorf("master log lacks %q", want)
		}
	}
	// The runners manage the map; a tag added is reacted to.
	out, _ = c.Run("salt-run", "reactor.add", "salt/custom/again", "reactors=salt://reactor/highstate.sls", "--out", "json")
	if !strings.Contains(out, `"Reactor added."`) {
		t.Errorf("reactor.add: %s", out)
	}
	out, _ = c.Run("salt-run", "reactor.delete", "salt/custom/*", "--out", "json")
	if !strings.Contains(out, `"Reactor deleted."`) {
		t.Errorf("reactor.delete: %s", out)
	}
	out, _ = c.Run("salt-run", "reactor.delete", "salt/custom/*", "--out", "json")
	if !strings.Contains(out, `"Reactor does not exists."`) {
		t.Errorf("reactor.delete again: %s", out)
	}
	if err := os.Remove(marker); err != nil {
		t.Fatal(err)
	}
	if out, code := c.Run("salt-run", "event.send", "salt/custom/again", `{"id": "web1"}`); code != 0 || !strings.Contains(out, "True") {
		t.Fatalf("event.send: exit %d\n%s", code, out)
	}
	c.WaitFor("the highstate of the added reaction", func() bool {
		b, err := os.ReadFile(marker)
		return err == nil && strings.TrimSpace(string(b)) == "salt/custom/again"
	})
}

// TestE2EReactorMasterMinion renders a reaction with the master
// minion's salt[...] and grains (Salt's MasterMinion: the master's own
// execution functions, no minion involved), triggered by a minion's
// event.send, which goes up to the master's bus; a caller reaction on
// the master is refused with Salt's failed-reaction line, and the
// event's other reaction still runs.
func TestE2EReactorMasterMinion(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a master and a minion")
	}
	c := clustertest.New(t, `auto_accept: True
reactor:
  - 'app/echo':
    - salt://reactor/echo.sls
`)
	writeTree(t, filepath.Join(c.Dir, "srv/salt"), map[string]string{
		"reactor/echo.sls": `{% set who = salt['test.echo'](data['id']) %}
apply_{{ who }}:
  local.state.apply:
    - tgt: {{ who }}
    - args:
      - mods: marker
      - pillar: {started_by: "{{ grains['id'] }} {{ salt['grains.get']('id') }} {{ 'test.echo' in salt }}"}
caller_on_master:
  caller.file.touch:
    - args:
      - name: /nonexistent/x
`,
		"marker.sls": `marker:
  file.managed:
    - name: {{ opts['cachedir'] }}/reacted
    - contents: "{{ pillar.get('started_by', 'none') }}"
`,
	})
	dir := c.MinionConf("web1", "web1", "")
	c.StartMinion("web1", dir)
	c.PingUntil("*", "web1")
	if out, code := c.Run("salt", "web1", "event.send", "app/echo", "id=web1", "--out", "json"); code != 0 || !strings.Contains(out, `"web1": true`) {
		t.Fatalf("event.send: exit %d\n%s", code, out)
	}
	marker := filepath.Join(dir, "cache", "reacted")
	var got string
	c.WaitFor("the state the reaction applied", func() bool {
		b, err := os.ReadFile(marker)
		got = strings.TrimSpace(string(b))
		return err == nil
	})
	f := strings.Fields(got)
	if len(f) != 3 || f[0] != f[1] || !strings.HasSuffix(f[0], "_master") || f[2] != "True" {
		t.Errorf("the master minion's grains and salt gave %q, want \"<id>_master <id>_master True\"", got)
	}
	c.WaitFor("the refused caller reaction", func() bool {
		return strings.Contains(c.Logs["master"].String(), "Reactor 'caller_on_master' failed to execute caller 'file.touch'")
	})
}
