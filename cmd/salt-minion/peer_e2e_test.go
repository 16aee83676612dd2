package main

import (
	"testing"

	"github.com/brinesalt/brine/internal/testsupport/clustertest"
	"github.com/google/go-cmp/cmp"
)

// TestE2EPeerPublish runs peer publish between real minions: web1 may
// publish test.* functions and run manage.up, db1 may do neither; the
// master refuses as Salt does, with an empty answer and nothing run.
func TestE2EPeerPublish(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a master and two minions")
	}
	c := clustertest.New(t, `auto_accept: True
peer:
  'web.*':
    - test.*
peer_run:
  web1:
    - manage.up
`)
	for _, id := range []string{"web1", "db1"} {
		c.StartMinion(id, c.MinionConf(id, id, ""))
	}
	c.PingUntil("*", "db1", "web1")
	empty := map[string]any{}
	for _, tc := range []struct {
		name string
		args []string
		want any
	}{
		{"allowed", []string{"web1", "publish.publish", "db1", "test.echo", "hi"}, map[string]any{"web1": map[string]any{"db1": "hi"}}},
		{"arguments parsed as Salt parses them", []string{"web1", "publish.publish", "db1", "test.arg_clean", "['1', 'k=v']"},
			map[string]any{"web1": map[string]any{"db1": map[string]any{"args": []any{float64(1)}, "kwargs": map[string]any{"k": "v"}}}}},
		{"full data", []string{"web1", "publish.full_data", "db*", "test.ping"}, map[string]any{"web1": map[string]any{"db1": map[string]any{"ret": true}}}},
		{"function not in the ACL", []string{"web1", "publish.publish", "db1", "cmd.run", "id"}, map[string]any{"web1": empty}},
		{"minion not in the ACL", []string{"db1", "publish.publish", "web1", "test.ping"}, map[string]any{"db1": empty}},
		{"no recursive publish", []string{"web1", "publish.publish", "db1", "publish.publish"}, map[string]any{"web1": empty}},
		{"runner allowed", []string{"web1", "publish.runner", "manage.up"}, map[string]any{"web1": []any{"db1", "web1"}}},
		{"runner refused", []string{"db1", "publish.runner", "manage.up"}, map[string]any{"db1": empty}},
		{"runner not in the ACL", []string{"web1", "publish.runner", "manage.down"}, map[string]any{"web1": empty}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := jsonRun(t, c, "salt", append(tc.args, "-t", "20")...)
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("salt %v (-want +got):\n%s", tc.args, d)
			}
		})
	}
	if log := c.Logs["master"].String(); !contains(log, "Minion id db1 is not who it says it is!") {
		t.Errorf("the master did not log the refused runner")
	}
}
