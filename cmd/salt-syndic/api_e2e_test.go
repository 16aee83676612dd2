package main

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/brinesalt/brine/internal/testsupport/apitest"
)

// TestAPITiers: salt-api in front of the top master of a two-tier tree
// sees the lower tier's minions as `salt` on the top does — local,
// local_async with /jobs/<jid>, local_batch, /minions and the runner's
// jobs.lookup_jid — over HTTPS with Go's HTTP client.
func TestAPITiers(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemons")
	}
	a := apitest.Start(t, apitest.Options{MasterConf: apitest.DefaultMasterConf + topConf, Tools: []string{"salt-syndic"}})
	tr := treeOn(t, a.Cluster)
	a.StartMinion("direct1", a.MinionConf("direct1", "direct1", "grains: {role: web}"))
	l1 := tr.addTier("syn1", map[string]string{"l1a": "{role: web}", "l1b": "{role: db}"})
	accept(t, l1, "l1a", "l1b")
	all := []string{"direct1", "l1a", "l1b"}
	a.PingUntil("*", all...)
	tok := a.Login("alice", "x", "auto")

	t.Run("local across tiers", func(t *testing.T) {
		for _, tc := range []struct {
			low  map[string]any
			want string
		}{
			{map[string]any{"tgt": "*"}, `{"direct1":true,"l1a":true,"l1b":true}`},
			// Nothing on the top matches: the lower tier still answers.
			{map[string]any{"tgt": "l1*"}, `{"l1a":true,"l1b":true}`},
			{map[string]any{"tgt": "role:web", "tgt_type": "grain"}, `{"direct1":true,"l1a":true}`},
			{map[string]any{"tgt": "G@role:db or direct1", "tgt_type": "compound"}, `{"direct1":true,"l1b":true}`},
			{map[string]any{"tgt": "nobody*"}, `{}`},
		} {
			tc.low["client"], tc.low["fun"] = "local", "test.ping"
			m := a.JSON("/", tok, tc.low, 200)
			if got := compact(m["return"].([]any)[0]); got != tc.want {
				t.Errorf("%v: got %s, want %s", tc.low, got, tc.want)
			}
		}
	})

	t.Run("local_subset picks from every tier", func(t *testing.T) {
		// Only the lower tier matches: Salt's cmd_subset picks from the
		// minions that answered sys.list_functions, syndic tiers included.
		m := a.JSON("/", tok, map[string]any{"client": "local_subset", "tgt": "l1*", "fun": "test.ping", "subset": 2}, 200)
		if got := compact(m["return"].([]any)[0]); got != `{"l1a":true,"l1b":true}` {
			t.Errorf("local_subset l1* 2: got %s", got)
		}
	})

	t.Run("local_async, /jobs and lookup_jid", func(t *testing.T) {
		m := a.JSON("/", tok, map[string]any{"client": "local_async", "tgt": "l1*", "fun": "test.echo", "arg": []string{"hi"}}, 200)
		r := m["return"].([]any)[0].(map[string]any)
		jid, _ := r["jid"].(string)
		if jid == "" || compact(r["minions"]) != `[]` {
			t.Fatalf("local_async on the top, lower tier only: %s", compact(m))
		}
		a.WaitFor("GET /jobs/"+jid+" with the lower tier", func() bool {
			_, body := a.Do("GET", "/jobs/"+jid, tok, "", nil)
			var j struct {
				Return []map[string]any `json:"return"`
			}
			return json.Unmarshal(body, &j) == nil && len(j.Return) == 1 && compact(j.Return[0]) == `{"l1a":"hi","l1b":"hi"}`
		})
		lm := a.JSON("/", tok, map[string]any{"client": "runner", "fun": "jobs.lookup_jid", "jid": jid}, 200)
		if got := compact(lm["return"].([]any)[0]); got != `{"l1a":"hi","l1b":"hi"}` {
			t.Errorf("runner jobs.lookup_jid: %s", got)
		}
	})

	t.Run("POST /minions", func(t *testing.T) {
		m := a.JSON("/minions", tok, map[string]any{"tgt": "*", "fun": "test.echo", "arg": []string{"yo"}}, 202)
		jid, _ := m["return"].([]any)[0].(map[string]any)["jid"].(string)
		a.WaitFor("the /minions job on every tier", func() bool {
			lm := a.JSON("/", tok, map[string]any{"client": "runner", "fun": "jobs.lookup_jid", "jid": jid}, 200)
			return compact(lm["return"].([]any)[0]) == `{"direct1":"yo","l1a":"yo","l1b":"yo"}`
		})
	})

	t.Run("GET /minions", func(t *testing.T) {
		_, body := a.Do("GET", "/minions", tok, "", nil)
		var g struct {
			Return []map[string]map[string]any `json:"return"`
		}
		if err := json.Unmarshal(body, &g); err != nil || len(g.Return) != 1 {
			t.Fatalf("GET /minions: %v %s", err, body)
		}
		var ids []string
		for id, grains := range g.Return[0] {
			if grains["id"] != id {
				t.Errorf("%s: grains %v", id, grains)
			}
			ids = append(ids, id)
		}
		slices.Sort(ids)
		if !slices.Equal(ids, all) {
			t.Errorf("GET /minions: %v, want %v", ids, all)
		}
	})

	t.Run("local_batch", func(t *testing.T) {
		m := a.JSON("/", tok, map[string]any{"client": "local_batch", "tgt": "*", "fun": "test.ping", "batch": "2"}, 200)
		var ids []string
		for _, item := range m["return"].([]any) {
			for id, v := range item.(map[string]any) {
				if v == true {
					ids = append(ids, id)
				}
			}
		}
		slices.Sort(ids)
		if !slices.Equal(ids, all) {
			t.Errorf("local_batch: %v, want %v (%s)", ids, all, compact(m))
		}
	})
}

// compact is v as compact JSON (encoding/json sorts map keys).
func compact(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
