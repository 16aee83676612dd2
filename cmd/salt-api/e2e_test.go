package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/brinesalt/brine/internal/testsupport/apitest"
)

func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemons")
	}
	a := apitest.Start(t, apitest.Options{Minions: []string{"m1", "m2"}})
	tok := a.Login("alice", "pw", "auto")
	for _, low := range []map[string]any{
		{"client": "local", "tgt": "*", "fun": "test.ping"},
		{"client": "local_async", "tgt": "*", "fun": "test.ping"},
		{"client": "runner", "fun": "jobs.list_jobs"},
		{"client": "wheel", "fun": "key.list_all"},
		{"client": "local_batch", "tgt": "*", "fun": "test.ping", "batch": "1"},
		{"client": "local_subset", "tgt": "*", "fun": "test.ping", "subset": 1},
	} {
		out := a.JSON("/", tok, low, 200)
		b, _ := json.Marshal(out)
		t.Logf("%v -> %s", low, b)
	}
	resp, body := a.Do("GET", "/jobs", tok, "", nil)
	t.Logf("%d %s", resp.StatusCode, body)
	if !strings.Contains(a.Log(), "salt-api") {
		t.Log(a.Log())
	}
}
