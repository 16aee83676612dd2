package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brinesalt/brine/internal/testsupport/testhosts"
)

// TestE2EMineWrapper is salt-ssh's mine.get (Salt's ssh wrapper): the
// hosts keep no mine, so salt-ssh runs the mine function on the targeted
// hosts with the arguments of their mine_functions — the roster entry's
// first, then the master config's — both from the command line and
// from a template rendered for another host.
func TestE2EMineWrapper(t *testing.T) {
	c := testhosts.New(t, 2)
	e := newEnv(t, c, true)
	srv := t.TempDir()
	writeTree(t, srv, map[string]string{
		"salt/show.sls": "show:\n  test.succeed_without_changes:\n    - name: peer-{{ salt['mine.get']('host1', 'whoami')['host1'] }}\n",
	})
	// writeRoster rewrites the master config; the mine settings go after.
	e.writeRoster(map[string]string{"host1": "  mine_functions:\n    whoami:\n      mine_function: grains.get\n      key: id\n"})
	conf := filepath.Join(e.dir, "master")
	b, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	extra := fmt.Sprintf("file_roots:\n  base:\n    - %s/salt\nmine_functions:\n  whoami:\n    - mine_function: test.echo\n    - from-master-config\n", srv)
	if err := os.WriteFile(conf, append(b, extra...), 0o600); err != nil {
		t.Fatal(err)
	}
	got, code, stderr := e.saltSSH("host2", "mine.get", "*", "whoami")
	b, _ = json.Marshal(got)
	if code != 0 || string(b) != `{"host2":{"host1":"host1","host2":"from-master-config"}}` {
		t.Fatalf("mine.get: code %d, %s\n%s", code, b, stderr)
	}
	got, code, stderr = e.saltSSH("host2", "state.sls", "show")
	b, _ = json.Marshal(got)
	if code != 0 || !strings.Contains(string(b), `"name":"peer-host1"`) {
		t.Fatalf("state with mine.get: code %d, %s\n%s", code, b, stderr)
	}
	// A function without a mine_functions entry runs with no arguments.
	got, code, _ = e.saltSSH("host1", "mine.get", "host2", "test.ping")
	if b, _ = json.Marshal(got); code != 0 || string(b) != `{"host1":{"host2":true}}` {
		t.Errorf("mine.get test.ping: code %d, %s", code, b)
	}
	got, code, _ = e.saltSSH("host1", "mine.get", "host2")
	if s, _ := got["host1"].(string); code == 0 || s != "mine.get needs tgt and fun" {
		t.Errorf("mine.get without fun: code %d, %v", code, got)
	}
}
