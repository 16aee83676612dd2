package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brinesalt/brine/internal/testsupport/clustertest"
	"github.com/google/go-cmp/cmp"
)

// TestE2EMinionReactor runs a real salt-minion with Salt's reactor
// engine (engines: [reactor], a reactor: map in the minion config): an
// event.fire on the minion's own bus runs caller reactions on the
// minion, in the new (keyword) and the legacy (positional) argument
// forms, rendered with the minion's grains and salt[...]; a salt://
// reaction comes from the minion's file_roots; a local reaction, which
// needs a master's client, is logged as Salt logs a failed reaction and
// the others still run; an event with no reaction runs nothing. The
// reactions of one event run in Salt's order_chunks order (by ID here).
func TestE2EMinionReactor(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a master and a minion")
	}
	c := clustertest.New(t, "auto_accept: True\n")
	out := t.TempDir()
	dir := filepath.Join(c.Dir, "minion-web1")
	writeFiles(t, dir, map[string]string{
		"reactor/deploy.sls": `a_touch_marker:
  caller.file.touch:
    - args:
      - name: {{ data['path'] }}/touched
b_write_id:
  caller.file.write:
    - args:
      - {{ data['path'] }}/written
      - "{{ grains['id'] }} {{ salt['test.echo']('from-salt') }} {{ tag }}"
needs_master:
  local.test.ping:
    - tgt: '*'
`,
		"srv/reactor/other.sls": `c_append:
  caller.file.append:
    - args:
      - path: {{ data['path'] }}/written
      - args: [appended]
`,
	})
	conf := fmt.Sprintf(`engines:
  - reactor:
      worker_threads: 2
reactor:
  - 'app/deploy':
    - %[1]s/reactor/deploy.sls
  - 'app/*':
    - salt://reactor/other.sls
reactor_niceness: 3
file_roots:
  base:
    - %[1]s/srv
`, dir)
	c.MinionConf("web1", "web1", conf)
	c.StartMinion("web1", dir)
	c.PingUntil("*", "web1")
	if got := jsonRun(t, c, "salt", "web1", "event.fire", `{"path": "`+out+`"}`, "app/deploy"); cmp.Diff(map[string]any{"web1": true}, got) != "" {
		t.Fatalf("event.fire: %v", got)
	}
	written := filepath.Join(out, "written")
	c.WaitFor("the caller reactions", func() bool {
		b, _ := os.ReadFile(written)
		_, err := os.Stat(filepath.Join(out, "touched"))
		return err == nil && strings.Contains(string(b), "appended")
	})
	b, _ := os.ReadFile(written)
	if got, want := string(b), "web1 from-salt app/deploy\nappended\n"; got != want {
		t.Errorf("written = %q, want %q", got, want)
	}
	c.WaitFor("the refused local reaction in the log", func() bool {
		return strings.Contains(c.Logs["web1"].String(), "Reactor 'needs_master' failed to execute local 'test.ping'")
	})
	logs := c.Logs["web1"].String()
	for _, want := range []string{"Starting Engine(salt.engines.reactor, name=reactor)", "Reactor setting niceness to 3"} {
		if !strings.Contains(logs, want) {
			t.Errorf("minion log lacks %q", want)
		}
	}
	os.Remove(written)
	jsonRun(t, c, "salt", "web1", "event.fire", `{"path": "`+out+`"}`, "nothing/here")
	jsonRun(t, c, "salt", "web1", "test.ping")
	if _, err := os.Stat(written); err == nil {
		t.Error("an event no reaction matches ran one")
	}
}
