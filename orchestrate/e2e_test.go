package orchestrate_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brinesalt/brine/internal/testsupport/apitest"
	"github.com/brinesalt/brine/internal/testsupport/clustertest"
	"github.com/brinesalt/brine/internal/testsupport/testhosts"
)

// orchFiles are the orchestration and the minions' SLS files the tests
// run: three tiers (db1, the web minions, a salt-ssh-only host) ordered
// by requisites, and a run with a failure that an onfail state handles
// and a failhard that stops what comes after it.
var orchFiles = map[string]string{
	"dbsetup.sls":  "db_schema:\n  test.succeed_with_changes: []\n",
	"websetup.sls": "web_app:\n  test.succeed_with_changes: []\n",
	"sshcheck.sls": "edge_check:\n  test.succeed_without_changes: []\n",
	"failing.sls":  "broken_migration:\n  test.fail_without_changes: []\n",
	"orch/deploy.sls": `db_setup:
  salt.state:
    - tgt: db1
    - sls: dbsetup

web_setup:
  salt.state:
    - tgt: 'web*'
    - sls:
      - websetup
    - require:
      - salt: db_setup

edge:
  salt.state:
    - tgt: host1
    - ssh: True
    - sls: sshcheck
    - require:
      - salt: web_setup

uptime:
  salt.function:
    - name: test.echo
    - tgt: 'web*'
    - arg:
      - deployed
    - require:
      - salt: edge
`,
	"orch/failing.sls": `migrate:
  salt.state:
    - tgt: db1
    - sls: failing

rollback:
  salt.function:
    - name: test.echo
    - tgt: db1
    - arg: [rolled back]
    - onfail:
      - salt: migrate

web_deploy:
  salt.state:
    - tgt: 'web*'
    - sls: websetup
    - require:
      - salt: migrate

gate:
  salt.function:
    - name: cmd.run
    - tgt: web1
    - arg: ['exit 3']
    - failhard: True

after_gate:
  salt.function:
    - name: test.ping
    - tgt: 'web*'
`,
	"orch/missing.sls": `nobody:
  salt.state:
    - tgt: nosuchminion
    - sls: dbsetup
`,
	"withpillar.sls": "release_{{ pillar['release'] }}:\n  test.succeed_with_changes: []\n",
	"orch/pillar.sls": `push:
  salt.state:
    - tgt: db1
    - sls: withpillar
    - pillar:
        release: {{ pillar['release'] }}
`,
	"orch/batch.sls": `rolling:
  salt.state:
    - tgt: 'web*'
    - sls: websetup
    - batch: 1
`,
	"orch/wait.sls": `wait_webs:
  salt.wait_for_event:
    - name: salt/job/*/ret/web*
    - id_list: [web1, web2]
    - timeout: 30
    - parallel: True

slow_ping:
  salt.function:
    - name: test.sleep
    - tgt: 'web*'
    - arg: [1]
`,
	"orch/broken.sls": "bad:\n  salt.state:\n    - tgt: db1\n   - sls: [unclosed\n",
	"orch/runners.sls": `keys:
  salt.wheel:
    - name: key.list_all

inner:
  salt.runner:
    - name: state.orchestrate
    - mods: orch.missing
`,
}

func TestOrchestration(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemons")
	}
	hosts := testhosts.New(t, 1)
	c := clustertest.New(t, fmt.Sprintf("auto_accept: True\nroster_file: %s\nknown_hosts_file: %s\n",
		hosts.RosterPath(), hosts.KnownHostsPath()))
	apitest.BuildThin(t, c.Bin)
	for name, body := range orchFiles {
		p := filepath.Join(c.Dir, "srv/salt", name)
		os.MkdirAll(filepath.Dir(p), 0o700)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"db1", "web1", "web2"} {
		c.StartMinion(id, c.MinionConf(id, id, ""))
	}
	c.PingUntil("*", "db1", "web1", "web2")

	t.Run("three tiers", func(t *testing.T) {
		events := startEvents(t, c, "salt/run/*")
		out, code := c.Run("salt-run", "state.orchestrate", "orch.deploy", "--out", "json")
		if code != 0 {
			t.Fatalf("exit %d:\n%s", code, out)
		}
		run := masterRun(t, out)
		for _, id := range []string{"db_setup", "web_setup", "edge", "uptime"} {
			st := state(t, run, id)
			if st["result"] != true {
				t.Errorf("%s: %v", id, st)
			}
		}
		if n := num(state(t, run, "db_setup")) + 1; n != num(state(t, run, "web_setup")) || n+1 != num(state(t, run, "edge")) {
			t.Errorf("tiers out of order: %v", run)
		}
		web := state(t, run, "web_setup")
		ret := web["changes"].(map[string]any)["ret"].(map[string]any)
		if web["comment"] != "States ran successfully. Updating web1, web2." && web["comment"] != "States ran successfully. Updating web2, web1." {
			t.Errorf("web_setup comment: %v", web["comment"])
		}
		if len(ret) != 2 || web["changes"].(map[string]any)["out"] != "highstate" {
			t.Errorf("web_setup changes: %v", web["changes"])
		}
		edge := state(t, run, "edge")
		if !strings.Contains(fmt.Sprint(edge["comment"]), "No changes made to host1") {
			t.Errorf("ssh tier: %v", edge)
		}
		up := state(t, run, "uptime")["changes"].(map[string]any)["ret"].(map[string]any)
		if up["web1"] != "deployed" || up["web2"] != "deployed" {
			t.Errorf("salt.function: %v", up)
		}
		tags := events()
		var suffixes []string
		for _, tag := range tags {
			suffixes = append(suffixes, tag[strings.LastIndex(tag, "/")+1:])
		}
		if got := strings.Join(suffixes, ","); got != "new,args,args,args,args,ret" {
			t.Errorf("runner events: %s (%v)", got, tags)
		}
	})

	t.Run("highstate output", func(t *testing.T) {
		out, code := c.Run("salt-run", "state.orch", "orch.deploy")
		if code != 0 {
			t.Fatalf("exit %d:\n%s", code, out)
		}
		for _, want := range []string{"_master:\n", "          ID: web_setup\n    Function: salt.state\n",
			"              web1:\n              ----------\n                        ID: web_app\n",
			"Summary for db1", "Summary for web1", "No changes made to host1", "Total states run:     4"} {
			if !strings.Contains(out, want) {
				t.Errorf("missing %q in:\n%s", want, out)
			}
		}
	})

	t.Run("onfail and failhard", func(t *testing.T) {
		out, code := c.Run("salt-run", "state.orchestrate", "orch.failing", "--out", "json")
		if code != 1 {
			t.Fatalf("exit %d, want 1:\n%s", code, out)
		}
		run := masterRun(t, out)
		if st := state(t, run, "migrate"); st["result"] != false || st["comment"] != "Run failed on minions: db1" {
			t.Errorf("migrate: %v", st)
		}
		if st := state(t, run, "rollback"); st["result"] != true ||
			st["changes"].(map[string]any)["ret"].(map[string]any)["db1"] != "rolled back" {
			t.Errorf("rollback (onfail): %v", st)
		}
		if st := state(t, run, "web_deploy"); st["result"] != false || !strings.Contains(fmt.Sprint(st["comment"]), "requisite failed") {
			t.Errorf("web_deploy: %v", st)
		}
		if st := state(t, run, "gate"); st["result"] != false ||
			st["comment"] != "Running function cmd.run failed on minions: web1 Function cmd.run ran on web1." {
			t.Errorf("gate: %v", st)
		}
		for tag := range run {
			if strings.Contains(tag, "after_gate") {
				t.Errorf("after_gate ran after the failhard: %v", run[tag])
			}
		}
	})

	t.Run("test mode", func(t *testing.T) {
		out, code := c.Run("salt-run", "state.orchestrate", "orch.deploy", "test=True", "--out", "json")
		if code != 0 {
			t.Fatalf("exit %d:\n%s", code, out)
		}
		run := masterRun(t, out)
		if st := state(t, run, "db_setup"); st["result"] != nil {
			t.Errorf("db_setup in test mode: %v", st)
		}
		if st := state(t, run, "uptime"); st["result"] != nil || st["comment"] != "Function test.echo would be executed on target web*" {
			t.Errorf("uptime in test mode: %v", st)
		}
		web := state(t, run, "web_setup")["changes"].(map[string]any)["ret"].(map[string]any)["web1"].(map[string]any)
		for _, v := range web {
			if v.(map[string]any)["result"] != nil {
				t.Errorf("web1 ran for real: %v", v)
			}
		}
	})

	t.Run("show_sls", func(t *testing.T) {
		out, code := c.Run("salt-run", "state.orchestrate_show_sls", "orch.deploy", "--out", "json")
		var v map[string]map[string]map[string]any
		if err := json.Unmarshal([]byte(out), &v); err != nil || code != 0 {
			t.Fatalf("exit %d %v:\n%s", code, err, out)
		}
		for id, high := range v {
			if !strings.HasSuffix(id, "_master") {
				t.Errorf("show_sls host %q", id)
			}
			if high["edge"]["__sls__"] != "orch.deploy" || high["edge"]["salt"] == nil {
				t.Errorf("show_sls edge: %v", high["edge"])
			}
		}
	})

	t.Run("bad input", func(t *testing.T) {
		out, code := c.Run("salt-run", "state.orchestrate", "orch.missing", "--out", "json")
		st := state(t, masterRun(t, out), "nobody")
		if code != 1 || st["result"] != false || st["comment"] != "No minions returned" {
			t.Errorf("missing target: exit %d %v", code, st)
		}
		out, code = c.Run("salt-run", "state.orchestrate", "orch.broken")
		if code != 1 || !strings.Contains(out, "Data failed to compile") || !strings.Contains(out, "orch.broken") {
			t.Errorf("render failure: exit %d:\n%s", code, out)
		}
		out, code = c.Run("salt-run", "state.orchestrate", "orch.nosuch")
		if code != 1 || !strings.Contains(out, "No matching sls found for 'orch.nosuch' in env 'base'") {
			t.Errorf("missing sls: exit %d:\n%s", code, out)
		}
	})

	t.Run("runner and wheel", func(t *testing.T) {
		out, code := c.Run("salt-run", "state.orchestrate", "orch.runners", "--out", "json")
		if code != 1 {
			t.Errorf("exit %d, want 1 (the inner orchestration fails)", code)
		}
		run := masterRun(t, out)
		keys := state(t, run, "keys")
		acc := keys["changes"].(map[string]any)["return"].(map[string]any)["minions"]
		if keys["result"] != true || len(acc.([]any)) != 3 {
			t.Errorf("salt.wheel key.list_all: %v", keys)
		}
		inner := state(t, run, "inner")
		if inner["result"] != false || inner["comment"] != "Runner function 'state.orchestrate' failed." {
			t.Errorf("salt.runner: %v", inner)
		}
		out, _ = c.Run("salt-run", "state.orchestrate", "orch.runners")
		if !strings.Contains(out, "ID: nobody") {
			t.Errorf("nested orchestration output:\n%s", out)
		}
	})

	t.Run("pillar, batch, wait_for_event", func(t *testing.T) {
		out, code := c.Run("salt-run", "state.orchestrate", "orch.pillar", `pillar={"release": 42}`, "--out", "json")
		push := state(t, masterRun(t, out), "push")
		if code != 0 || push["result"] != true ||
			!strings.Contains(out, `"test_|-release_42_|-release_42_|-succeed_with_changes"`) {
			t.Errorf("pillar through the orchestration to the minion: exit %d:\n%s", code, out)
		}
		out, code = c.Run("salt-run", "state.orchestrate", "orch.batch", "--out", "json")
		rolling := state(t, masterRun(t, out), "rolling")
		if code != 0 || len(rolling["changes"].(map[string]any)["ret"].(map[string]any)) != 2 {
			t.Errorf("batch: exit %d:\n%s", code, out)
		}
		out, code = c.Run("salt-run", "state.orchestrate", "orch.wait", "--out", "json")
		wait := state(t, masterRun(t, out), "wait_webs")
		seen := fmt.Sprint(wait["changes"].(map[string]any)["minions_seen"])
		if code != 0 || wait["result"] != true || (seen != "[web1 web2]" && seen != "[web2 web1]") {
			t.Errorf("wait_for_event: exit %d:\n%s", code, out)
		}
	})

	t.Run("single and high", func(t *testing.T) {
		out, code := c.Run("salt-run", "state.orchestrate_single", "fun=salt.function", "name=test.ping", "tgt=db1", "--out", "json")
		if code != 0 || !strings.Contains(out, `"comment": "Function ran successfully. Function test.ping ran on db1."`) {
			t.Errorf("orchestrate_single: exit %d:\n%s", code, out)
		}
		out, code = c.Run("salt-run", "state.orchestrate_high",
			`{stage_one: {salt: [function, {name: test.echo}, {tgt: web1}, {arg: [one]}]}, stage_two: {salt: [function, {name: test.echo}, {tgt: web2}, {arg: [two]}, {require: [{salt: stage_one}]}]}}`,
			"--out", "json")
		if code != 0 || !strings.Contains(out, `"web2": "two"`) || !strings.Contains(out, `"web1": "one"`) {
			t.Errorf("orchestrate_high: exit %d:\n%s", code, out)
		}
	})
}

// masterRun decodes salt-run's JSON of an orchestration and returns the
// master minion's state returns by tag.
func masterRun(t *testing.T, out string) map[string]map[string]any {
	t.Helper()
	var v struct {
		Data    map[string]map[string]map[string]any
		Retcode int
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || len(v.Data) != 1 {
		t.Fatalf("orchestration output %v:\n%s", err, out)
	}
	for id, run := range v.Data {
		if !strings.HasSuffix(id, "_master") {
			t.Errorf("orchestration host %q", id)
		}
		return run
	}
	return nil
}

func state(t *testing.T, run map[string]map[string]any, id string) map[string]any {
	t.Helper()
	for tag, st := range run {
		if strings.Split(tag, "_|-")[1] == id {
			return st
		}
	}
	t.Fatalf("no state %s in %v", id, run)
	return nil
}

func num(st map[string]any) int { n, _ := st["__run_num__"].(float64); return int(n) }

// startEvents starts salt-run state.event on tag and waits until it is
// subscribed (it has printed the events of a probe runner, cache.grains);
// the function it returns waits until the listener printed the ret
// event of a runner.state.orchestrate job and answers the tags printed
// after the probe's, then stops the listener.
func startEvents(t *testing.T, c *clustertest.Cluster, tag string) func() []string {
	t.Helper()
	cmd := exec.Command(filepath.Join(c.Bin, "salt-run"), "-c", filepath.Join(c.Dir, "master"), "state.event", "tagmatch="+tag)
	out := &clustertest.SyncBuffer{}
	cmd.Stdout = out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	c.WaitFor("event listener", func() bool {
		c.Run("salt-run", "cache.grains")
		return strings.Contains(out.String(), "runner.cache.grains")
	})
	// The probes' events are all printed once their ret is: skip them.
	skip := 0
	c.WaitFor("probe events", func() bool {
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		n := len(lines)
		ok := n == skip && n > 0 && strings.Contains(lines[n-1], "/ret\t")
		skip = n
		return ok
	})
	return func() []string {
		var tags []string
		c.WaitFor("orchestration events", func() bool {
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")[skip:]
			tags = tags[:0]
			done := false
			for _, l := range lines {
				tag, data, _ := strings.Cut(l, "\t")
				tags = append(tags, tag)
				done = done || strings.HasSuffix(tag, "/ret") && strings.Contains(data, `"runner.state.orchestrate"`)
			}
			return done
		})
		return tags
	}
}
