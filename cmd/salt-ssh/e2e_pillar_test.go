package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/brinesalt/brine/internal/testsupport/testhosts"
)

// TestE2EPillarFunctions: pillar.items, get, item, raw and keys answer
// from each host's pillar compiled on the controller (Salt's salt-ssh
// pillar wrapper), the same pillar its states render with, and each
// host sees its own alone.
func TestE2EPillarFunctions(t *testing.T) {
	c := testhosts.New(t, 2)
	e := newEnv(t, c, true)
	srv := t.TempDir()
	writeTree(t, srv, map[string]string{
		"pillar/top.sls":    "base:\n  '*':\n    - common\n  host1:\n    - one\n  'G@os_family:Debian':\n    - match: compound\n    - debian\n",
		"pillar/common.sls": "app:\n  db: {host: db.example, port: 5432}\n  users: [ann, bob]\nseen_id: {{ grains['id'] }}\n",
		"pillar/one.sls":    "secret: for-host1-only\n",
		"pillar/debian.sls": "family: debian\n",
		"salt/show.sls":     "show:\n  test.succeed_without_changes:\n    - name: {{ pillar['app']['db']['host'] }}-{{ pillar.get('secret', 'none') }}\n",
	})
	e.writeMaster(fmt.Sprintf("file_roots:\n  base:\n    - %s/salt\npillar_roots:\n  base:\n    - %s/pillar\n", srv, srv))
	jsonOf := func(v any) string {
		b, _ := json.Marshal(v)
		return string(b)
	}
	for _, tt := range []struct {
		args []string
		want map[string]string // host → JSON of its return
	}{
		{[]string{"*", "pillar.items"}, map[string]string{
			"host1": `{"app":{"db":{"host":"db.example","port":5432},"users":["ann","bob"]},"family":"debian","secret":"for-host1-only","seen_id":"host1"}`,
			"host2": `{"app":{"db":{"host":"db.example","port":5432},"users":["ann","bob"]},"family":"debian","seen_id":"host2"}`}},
		{[]string{"*", "pillar.get", "app:db:port"}, map[string]string{"host1": `5432`, "host2": `5432`}},
		{[]string{"*", "pillar.get", "secret", "default=nope"}, map[string]string{"host1": `"for-host1-only"`, "host2": `"nope"`}},
		{[]string{"*", "pillar.get", "missing"}, map[string]string{"host1": `""`, "host2": `""`}},
		{[]string{"host2", "pillar.get", "app", `{"extra": 1}`, "merge=True"}, map[string]string{
			"host2": `{"db":{"host":"db.example","port":5432},"extra":1,"users":["ann","bob"]}`}},
		{[]string{"host1", "pillar.get", "app/users/1", "delimiter=/"}, map[string]string{"host1": `"bob"`}},
		{[]string{"*", "pillar.item", "secret", "seen_id"}, map[string]string{
			"host1": `{"secret":"for-host1-only","seen_id":"host1"}`, "host2": `{"seen_id":"host2"}`}},
		{[]string{"host1", "pillar.raw", "key=family"}, map[string]string{"host1": `"debian"`}},
		{[]string{"host1", "pillar.keys", "app"}, map[string]string{"host1": `["db","users"]`}},
	} {
		got, code, stderr := e.saltSSH(tt.args...)
		if code != 0 || len(got) != len(tt.want) {
			t.Errorf("salt-ssh %v: code %d, %v\n%s", tt.args, code, got, stderr)
			continue
		}
		for id, want := range tt.want {
			if s := jsonOf(got[id]); s != want {
				t.Errorf("salt-ssh %v on %s = %s, want %s", tt.args, id, s, want)
			}
		}
	}
	// A bad call is the host's failure, retcode 1, as Salt's run_wfunc.
	got, code, _ := e.saltSSH("host1", "pillar.keys", "secret")
	if s, _ := got["host1"].(string); code == 0 || !strings.Contains(s, "Pillar value in key secret is not a dict") {
		t.Errorf("pillar.keys secret: code %d, %v", code, got)
	}
	// The states see the same pillar.
	got, code, stderr := e.saltSSH("*", "state.sls", "show")
	if code != 0 {
		t.Fatalf("state.sls show: code %d, %v\n%s", code, got, stderr)
	}
	for id, want := range map[string]string{"host1": "db.example-for-host1-only", "host2": "db.example-none"} {
		if s := jsonOf(got[id]); !strings.Contains(s, `"name":"`+want+`"`) {
			t.Errorf("state on %s rendered %s, want name %s", id, s, want)
		}
	}
}
