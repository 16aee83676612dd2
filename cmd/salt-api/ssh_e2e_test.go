package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brinesalt/brine/internal/testsupport/apitest"
	"github.com/brinesalt/brine/internal/testsupport/testhosts"
)

// TestSSHClient runs the ssh client through the API against real sshd
// hosts: the roster must come from the master's rosters directories,
// raw shell needs netapi_allow_raw_shell, the caller's ACL applies to
// the roster's hosts, and the answer has Salt's per-host shape.
func TestSSHClient(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemons")
	}
	hosts := testhosts.New(t, 2)
	rosters := t.TempDir()
	roster, err := os.ReadFile(hosts.RosterPath())
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(rosters, "hosts"), roster, 0o600)
	a := apitest.Start(t, apitest.Options{Thin: true, MasterConf: fmt.Sprintf(`external_auth:
  auto:
    alice: [.*]
    pinger: [test.ping]
netapi_enable_clients: [ssh]
rosters: [%s]
known_hosts_file: %s
`, rosters, hosts.KnownHostsPath())})
	tok := a.Login("alice", "x", "auto")

	code, body := post(a, "/", tok, map[string]any{"client": "ssh", "tgt": "*", "fun": "test.ping", "roster_file": "hosts"})
	ret := decode(t, body)["return"].([]any)[0].(map[string]any)
	h1, _ := ret["host1"].(map[string]any)
	if code != 200 || len(ret) != 2 || h1["return"] != true || h1["retcode"] != float64(0) || h1["id"] != "host1" ||
		h1["fun"] != "test.ping" || compact(h1["fun_args"]) != "[]" || len(fmt.Sprint(h1["jid"])) != 20 {
		t.Fatalf("ssh test.ping: %d %s", code, body)
	}
	code, body = post(a, "/", tok, map[string]any{"client": "ssh", "tgt": "host2", "fun": "cmd.run", "arg": "echo hi",
		"roster_file": "hosts"})
	if code != 200 || !strings.Contains(string(body), `"return": "hi"`) {
		t.Errorf("ssh cmd.run: %d %s", code, body)
	}
	code, body = post(a, "/", tok, map[string]any{"client": "ssh", "tgt": "*", "fun": "test.ping", "roster_file": hosts.RosterPath()})
	if code != 400 || !strings.Contains(string(body), "not found in the master's rosters") {
		t.Errorf("a roster outside rosters: %d %s", code, body)
	}
	code, body = post(a, "/", tok, map[string]any{"client": "ssh", "tgt": "*", "fun": "test.ping", "roster_file": "../../etc/passwd"})
	if code != 400 {
		t.Errorf("a roster path climbing out: %d %s", code, body)
	}
	code, body = post(a, "/", tok, map[string]any{"client": "ssh", "tgt": "host1", "fun": "id", "raw_shell": true, "roster_file": "hosts"})
	wantError(t, "raw shell", code, body, 401, "Raw shell option not allowed.")
	lim := a.Login("pinger", "x", "auto")
	code, body = post(a, "/", lim, map[string]any{"client": "ssh", "tgt": "*", "fun": "cmd.run", "arg": "id", "roster_file": "hosts"})
	wantError(t, "denied ssh function", code, body, 401, "Authorization error occurred.")
}
