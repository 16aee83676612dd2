package schedule

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/schedule"
	"github.com/brinesalt/brine/state/modules"
)

// fakeMinion is a running minion's scheduler without the daemon.
type fakeMinion struct{ s *schedule.Schedule }

func (f fakeMinion) Schedule() *schedule.Schedule      { return f.s }
func (fakeMinion) RefreshPillar(context.Context) error { return nil }
func (fakeMinion) RefreshGrains(context.Context) error { return nil }

func env(t *testing.T, withMinion bool) (*modules.Env, string) {
	dir := t.TempDir()
	opts := ordered.FromPairs("conf_file", filepath.Join(dir, "minion"))
	e := &modules.Env{Opts: opts, Registry: modules.Default}
	if withMinion {
		e.Minion = fakeMinion{schedule.New(schedule.Options{ConfFile: schedule.ConfFile(dir, "minion.d/*.conf"), Exec: func(context.Context, schedule.Run) {}})}
	}
	return e, filepath.Join(dir, "minion.d", "_schedule.conf")
}

func run(t *testing.T, e *modules.Env, fun string, args ...any) any {
	t.Helper()
	var pos []any
	kw := ordered.New()
	for _, a := range args {
		if s, ok := a.(string); ok && strings.Contains(s, "=") {
			k, v, _ := strings.Cut(s, "=")
			var val any = v
			switch v {
			case "True":
				val = true
			case "False":
				val = false
			}
			kw.Set(k, val)
			continue
		}
		pos = append(pos, a)
	}
	out, err := e.Run(t.Context(), fun, pos, kw)
	if err != nil {
		t.Fatalf("%s: %v", fun, err)
	}
	return out
}

func field(v any, k string) any { return v.(*ordered.Map).Value(k) }

func TestManageLive(t *testing.T) {
	e, conf := env(t, true)
	if got := run(t, e, "schedule.list"); got != "schedule: {}\n" {
		t.Fatalf("empty list %q", got)
	}
	add := run(t, e, "schedule.add", "job1", "function=test.ping", "seconds=3600")
	if field(add, "comment") != "Added job: job1 to schedule." || field(add, "result") != true {
		t.Fatalf("add: %v", add)
	}
	if got := run(t, e, "schedule.add", "job1", "function=test.ping", "seconds=60"); field(got, "comment") != "Job job1 already exists in schedule." {
		t.Fatalf("second add: %v", got)
	}
	want := "schedule:\n  job1:\n    enabled: true\n    function: test.ping\n    jid_include: true\n    maxrunning: 1\n    name: job1\n    saved: true\n    seconds: '3600'\n"
	if got := run(t, e, "schedule.list"); got != want {
		t.Fatalf("list:\n%s\nwant\n%s", got, want)
	}
	if b, err := os.ReadFile(conf); err != nil || !strings.Contains(string(b), "job1") {
		t.Fatalf("%s: %q %v", conf, b, err)
	}
	if got := run(t, e, "schedule.disable_job", "job1"); field(got, "comment") != "Disabled Job job1 in schedule." {
		t.Fatalf("disable_job: %v", got)
	}
	if got := run(t, e, "schedule.list", "show_disabled=False"); got != "schedule: {}\n" {
		t.Fatalf("list without disabled: %q", got)
	}
	if got := run(t, e, "schedule.run_job", "job1"); field(got, "comment") != "Job job1 is disabled." {
		t.Fatalf("run_job: %v", got)
	}
	bad := run(t, e, "schedule.add", "badcron", "function=test.ping", "cron=61 * * * *")
	if field(bad, "result") != false || !strings.Contains(field(bad, "comment").(string), "badcron") {
		t.Fatalf("bad cron: %v", bad)
	}
	if got := run(t, e, "schedule.disable"); field(got, "comment") != "Disabled schedule on minion." {
		t.Fatalf("disable: %v", got)
	}
	if got := run(t, e, "schedule.is_enabled"); got != false {
		t.Fatalf("is_enabled: %v", got)
	}
	if got := run(t, e, "schedule.delete", "job1"); field(got, "comment") != "Deleted Job job1 from schedule." {
		t.Fatalf("delete: %v", got)
	}
	if got := run(t, e, "schedule.delete", "job1"); field(got, "comment") != "Job job1 does not exist." {
		t.Fatalf("delete again: %v", got)
	}
	if got := run(t, e, "schedule.save"); field(got, "comment") != "Schedule (non-pillar items) saved." {
		t.Fatalf("save: %v", got)
	}
}

func TestWithoutMinion(t *testing.T) {
	e, conf := env(t, false)
	if got := run(t, e, "schedule.add", "j", "function=test.ping", "seconds=5"); field(got, "comment") != "Failed to add job j to schedule." {
		t.Fatalf("add without a minion: %v", got)
	}
	if got := run(t, e, "schedule.add", "j", "function=test.ping", "seconds=5", "offline=True"); field(got, "result") != true {
		t.Fatalf("offline add: %v", got)
	}
	if b, _ := os.ReadFile(conf); !strings.Contains(string(b), "j: {enabled: true, function: test.ping") {
		t.Fatalf("offline file: %s", b)
	}
	if got := run(t, e, "schedule.list", "offline=True", "return_yaml=False"); !got.(*ordered.Map).Has("j") {
		t.Fatalf("offline list: %v", got)
	}
	if got := run(t, e, "schedule.purge", "offline=True"); field(got, "changes").(*ordered.Map).Value("j") != "removed" {
		t.Fatalf("offline purge: %v", got)
	}
}

func TestBuildItem(t *testing.T) {
	e, _ := env(t, false)
	got := run(t, e, "schedule.build_schedule_item", "j", "function=test.ping", "cron=* * * * *", "seconds=5")
	if !strings.Contains(field(got, "comment").(string), `Unable to use "seconds"`) {
		t.Fatalf("conflict: %v", got)
	}
}
