package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brinesalt/brine/internal/testsupport/apitest"
)

// TestE2EWebhookReaction posts to salt-api's /hook/deploy as a CI system
// would; the event salt/netapi/hook/deploy runs a reaction that applies
// a state on the minion with the posted build number, an orchestration
// (runner.state.orchestrate) whose salt.state step rolls the build out,
// and a runner reaction that is stored in the job cache as run by
// "Reactor".
func TestE2EWebhookReaction(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemons")
	}
	a := apitest.Start(t, apitest.Options{Minions: []string{"m1"},
		MasterConf: apitest.DefaultMasterConf + `reactor:
  - 'salt/netapi/hook/deploy':
    - salt://reactor/deploy.sls
`,
		APIConf: "  webhook_disable_auth: True\n"})
	srv := filepath.Join(a.Dir, "srv/salt")
	for rel, content := range map[string]string{
		"reactor/deploy.sls": `deploy_app:
  local.state.apply:
    - tgt: m1
    - args:
      - mods: deploy
      - pillar: {build: {{ data['post']['build'] }}}
count_up:
  runner.manage.up: []
orchestrate_release:
  runner.state.orchestrate:
    - args:
      - mods: orch.release
      - pillar: {build: {{ data['post']['build'] }}}
`,
		"orch/release.sls": `roll_out:
  salt.state:
    - tgt: m1
    - sls: rolled
    - pillar: {build: {{ pillar['build'] }}}
`,
		"rolled.sls": `rolled:
  file.managed:
    - name: {{ opts['cachedir'] }}/rolled
    - contents: "orchestrated build {{ pillar['build'] }}"
`,
		"deploy.sls": `release:
  file.managed:
    - name: {{ opts['cachedir'] }}/release
    - contents: "build {{ pillar['build'] }}"
`,
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(srv, rel)), 0o700)
		if err := os.WriteFile(filepath.Join(srv, rel), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	resp, body := a.Do("POST", "/hook/deploy", "", "application/json", []byte(`{"build": 42}`))
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"success": true`) {
		t.Fatalf("hook: %d %s", resp.StatusCode, body)
	}
	release := filepath.Join(a.Dir, "minion-m1", "cache", "release")
	eventually(t, "the state the webhook's reaction applied", func() bool {
		b, err := os.ReadFile(release)
		return err == nil && strings.TrimSpace(string(b)) == "build 42"
	})
	eventually(t, "the orchestration the webhook's reaction ran", func() bool {
		b, err := os.ReadFile(filepath.Join(a.Dir, "minion-m1", "cache", "rolled"))
		return err == nil && strings.TrimSpace(string(b)) == "orchestrated build 42"
	})
	eventually(t, "the runner reaction in the job cache", func() bool {
		out, _ := a.Run("salt-run", "jobs.list_jobs", "search_function=runner.manage.up", "--out", "json")
		return contains(out, `"Function": "runner.manage.up"`, `"User": "Reactor"`)
	})
}
