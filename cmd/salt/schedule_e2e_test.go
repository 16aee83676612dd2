package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brinesalt/brine/internal/jobcache"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/testsupport/clustertest"
)

// TestScheduleEndToEnd runs a real master and minion: a job scheduled
// every 2 s in the minion config lands in the master's job cache with
// the load Salt stores for it (jid "req" turned into a jid, tgt the
// minion, the `schedule` key), a job with a returner writes its return
// through rawfile_json, and schedule.add/list/delete over salt manage
// the running scheduler and minion.d/_schedule.conf.
func TestScheduleEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemons")
	}
	c := clustertest.New(t, "auto_accept: True\n")
	retFile := filepath.Join(c.Dir, "sched-returns")
	dir := c.MinionConf("s1", "s1", `rawfile_json.filename: `+retFile+`
schedule:
  every2:
    function: test.echo
    args: [tick]
    seconds: 2
  with_returner:
    function: test.arg
    args: [a1]
    kwargs: {k: v}
    seconds: 2
    returner: rawfile_json
    return_job: false
  badcron:
    function: test.ping
    cron: '61 * * * *'
`)
	// A pillar schedule beside the configuration's.
	os.WriteFile(filepath.Join(c.Dir, "srv/pillar/top.sls"), []byte("base:\n  's1':\n    - sched\n"), 0o600)
	os.WriteFile(filepath.Join(c.Dir, "srv/pillar/sched.sls"), []byte("schedule:\n  from_pillar:\n    function: test.echo\n    args: [pillartick]\n    seconds: 2\n"), 0o600)
	c.StartMinion("s1", dir)
	c.PingUntil("s1", "s1")

	t.Run("every 2 s in the job cache", func(t *testing.T) {
		var jobs map[string]any
		c.WaitFor("two scheduled jobs in jobs.list_jobs", func() bool {
			out, _ := c.Run("salt-run", "jobs.list_jobs", "search_function=test.echo", "--out", "json")
			jobs = map[string]any{}
			_ = json.Unmarshal([]byte(out), &jobs)
			n := 0
			for jid, j := range jobs {
				m, _ := j.(map[string]any)
				if args, _ := m["Arguments"].([]any); m["Target"] == "s1" && len(args) == 1 && args[0] == "tick" {
					n++
				} else {
					delete(jobs, jid)
				}
			}
			return n >= 2
		})
		for jid := range jobs {
			out, code := c.Run("salt-run", "jobs.lookup_jid", jid, "--out", "json")
			if code != 0 || !strings.Contains(out, `"s1": "tick"`) {
				t.Fatalf("lookup_jid %s: %d %s", jid, code, out)
			}
			load := readLoad(t, c, jid)
			if load["schedule"] != "every2" || load["tgt"] != "s1" || load["tgt_type"] != "glob" || load["fun"] != "test.echo" {
				t.Fatalf("load of %s: %v", jid, load)
			}
			break
		}
	})
	t.Run("pillar schedule", func(t *testing.T) {
		c.WaitFor("the pillar's job in the job cache", func() bool {
			out, _ := c.Run("salt-run", "jobs.list_jobs", "search_function=test.echo", "--out", "json")
			jobs := map[string]map[string]any{}
			_ = json.Unmarshal([]byte(out), &jobs)
			for jid, j := range jobs {
				if args, _ := j["Arguments"].([]any); len(args) == 1 && args[0] == "pillartick" {
					return readLoad(t, c, jid)["schedule"] == "from_pillar"
				}
			}
			return false
		})
		out, _ := c.Run("salt", "s1", "schedule.list")
		if !strings.Contains(out, "from_pillar:") {
			t.Fatalf("schedule.list without the pillar job: %s", out)
		}
		out, _ = c.Run("salt", "s1", "schedule.delete", "from_pillar")
		if !strings.Contains(out, "Failed to delete job from_pillar from schedule.") {
			t.Fatalf("deleting a pillar job: %s", out)
		}
	})
	t.Run("returner", func(t *testing.T) {
		var lines []map[string]any
		c.WaitFor("rawfile_json line from the schedule", func() bool {
			lines = jsonLines(t, retFile)
			return len(lines) >= 1
		})
		l := lines[0]
		if l["schedule"] != "with_returner" || l["fun"] != "test.arg" || l["id"] != "s1" || len(l["jid"].(string)) != 20 {
			t.Fatalf("returner line: %v", l)
		}
		out, _ := c.Run("salt-run", "jobs.list_jobs", "search_function=test.arg", "--out", "json")
		if strings.Contains(out, "test.arg") {
			t.Fatalf("return_job: false reached the job cache: %s", out)
		}
	})
	t.Run("bad cron reported with its name", func(t *testing.T) {
		c.WaitFor("bad cron in the minion log", func() bool {
			return strings.Contains(c.Logs["s1"].String(), "Invalid cron string. Ignoring job badcron.")
		})
		if n := strings.Count(c.Logs["s1"].String(), "Ignoring job badcron"); n != 1 {
			t.Fatalf("bad cron reported %d times, want once", n)
		}
	})
	t.Run("schedule module", func(t *testing.T) {
		out, code := c.Run("salt", "s1", "schedule.add", "added", "function=test.ping", "minutes=30")
		if code != 0 || !strings.Contains(out, "Added job: added to schedule.") {
			t.Fatalf("schedule.add: %d %s", code, out)
		}
		out, _ = c.Run("salt", "s1", "schedule.list")
		if !strings.Contains(out, "added:") || !strings.Contains(out, "every2:") || !strings.Contains(out, "saved: true") {
			t.Fatalf("schedule.list: %s", out)
		}
		conf, err := os.ReadFile(filepath.Join(dir, "minion.d", "_schedule.conf"))
		if err != nil || !strings.Contains(string(conf), "added:") {
			t.Fatalf("_schedule.conf: %v %s", err, conf)
		}
		out, _ = c.Run("salt", "s1", "schedule.add", "nope", "function=test.ping", "cron=* * *")
		if !strings.Contains(out, "Invalid cron string. Ignoring job nope.") {
			t.Fatalf("bad cron add: %s", out)
		}
		out, _ = c.Run("salt", "s1", "schedule.run_job", "added")
		if !strings.Contains(out, "Scheduling Job added on minion.") {
			t.Fatalf("run_job: %s", out)
		}
		c.WaitFor("run_job's test.ping in the job cache", func() bool {
			out, _ := c.Run("salt-run", "jobs.list_jobs", "search_function=test.ping", "--out", "json")
			return strings.Contains(out, `"Target": "s1"`)
		})
		out, _ = c.Run("salt", "s1", "schedule.delete", "added")
		if !strings.Contains(out, "Deleted Job added from schedule.") {
			t.Fatalf("delete: %s", out)
		}
	})
}

// readLoad is the load of jid in the master's file job cache.
func readLoad(t *testing.T, c *clustertest.Cluster, jid string) map[string]any {
	t.Helper()
	load, err := jobcache.New(filepath.Join(c.Dir, "master/cache")).GetLoad(t.Context(), jid)
	if err != nil {
		t.Fatalf("load of %s: %v", jid, err)
	}
	out := map[string]any{}
	load.Range(func(k, v any) bool {
		out[ordered.KeyString(k)] = v
		return true
	})
	return out
}
