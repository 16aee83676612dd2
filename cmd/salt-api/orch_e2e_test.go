package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brinesalt/brine/internal/testsupport/apitest"
)

// TestOrchestrateThroughAPI drives the orchestration runners through the
// runner client: state.orchestrate_show_sls (what web front-ends call)
// answers the master minion's high data, and state.orchestrate runs the
// orchestration and answers Salt's {data, outputter, retcode} envelope.
func TestOrchestrateThroughAPI(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemons")
	}
	a := apitest.Start(t, apitest.Options{Minions: []string{"m1"}})
	sls := filepath.Join(a.Dir, "srv/salt/orch")
	os.MkdirAll(sls, 0o700)
	os.WriteFile(filepath.Join(sls, "ping.sls"), []byte("ping_all:\n  salt.function:\n    - name: test.ping\n    - tgt: '*'\n"), 0o600)
	os.WriteFile(filepath.Join(a.Dir, "srv/salt/noop.sls"), []byte("noop:\n  test.nop: []\n"), 0o600)
	tok := a.Login("alice", "x", "auto")

	code, body := post(a, "/", tok, map[string]any{"client": "runner", "fun": "state.orchestrate_show_sls", "mods": "orch.ping"})
	ret := decode(t, body)["return"].([]any)[0].(map[string]any)
	var high map[string]any
	for id, v := range ret {
		if strings.HasSuffix(id, "_master") {
			high, _ = v.(map[string]any)
		}
	}
	if code != 200 || len(ret) != 1 || compact(high["ping_all"]) !=
		`{"__env__":"base","__sls__":"orch.ping","salt":[{"name":"test.ping"},{"tgt":"*"},"function",{"order":10000}]}` {
		t.Errorf("state.orchestrate_show_sls: %d %s", code, body)
	}
	code, body = post(a, "/", tok, map[string]any{"client": "runner", "fun": "state.orchestrate", "mods": "orch.ping"})
	env := decode(t, body)["return"].([]any)[0].(map[string]any)
	if code != 200 || env["outputter"] != "highstate" || env["retcode"] != float64(0) ||
		!strings.Contains(string(body), `"comment": "Function ran successfully. Function test.ping ran on m1."`) {
		t.Errorf("state.orchestrate: %d %s", code, body)
	}
}
