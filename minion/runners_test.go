package minion_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/version"
	"github.com/brinesalt/brine/master"
	"github.com/brinesalt/brine/minion"
	"github.com/brinesalt/brine/thin"
	"github.com/brinesalt/brine/thin/frame"
)

func writeFiles(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRunners runs jobs.print_job, manage.versions, cache.grains and
// cache.pillar against a master with real minions; "old" reports Salt
// 3005.1 for test.version, as an older Salt minion would.
func TestRunners(t *testing.T) {
	c := startCluster(t)
	writeFiles(t, c.dir+"/pillar", map[string]string{
		"top.sls": "base:\n  web*:\n    - web\n  old:\n    - old\n",
		"web.sls": "role: web\n",
		"old.sls": "role: legacy\n",
	})
	c.start(t, map[string]*ordered.Map{
		"web1": ordered.FromPairs("os", "Debian"),
		"web2": ordered.FromPairs("os", "Alpine"),
		"old":  ordered.FromPairs("os", "Debian"),
	}, func(o *minion.Options) {
		if o.Config.ID != "old" {
			return
		}
		o.Execute = func(ctx context.Context, job *frame.Job) *frame.Result {
			if job.Fun == "test.version" {
				return &frame.Result{ID: job.ID, JID: job.JID, Fun: job.Fun, Return: "3005.1"}
			}
			return thin.Execute(ctx, job, thin.Options{})
		}
	})

	v := c.run(t, "manage.versions")
	if got := idsOf(v); got != "[Minion requires update Up to date Master]" {
		t.Fatalf("manage.versions labels %s", got)
	}
	if idsOf(v.Value("Up to date").(*ordered.Map)) != "[web1 web2]" || v.Value("Master") != version.Salt ||
		v.Value("Minion requires update").(*ordered.Map).Value("old") != "3005.1" {
		t.Fatalf("manage.versions = %v", v)
	}

	g := c.run(t, "cache.grains", "os:Debian", [2]any{"tgt_type", "grain"})
	if idsOf(g) != "[old web1]" || g.Value("web1").(*ordered.Map).Value("os") != "Debian" {
		t.Fatalf("cache.grains = %v", g)
	}
	p := c.run(t, "cache.pillar", "web*")
	if idsOf(p) != "[web1 web2]" || p.Value("web2").(*ordered.Map).Value("role") != "web" {
		t.Fatalf("cache.pillar = %v", p)
	}
	if p := c.run(t, "cache.pillar"); idsOf(p) != "[old web1 web2]" || p.Value("old").(*ordered.Map).Value("role") != "legacy" {
		t.Fatalf("cache.pillar without target = %v", p)
	}
	if _, err := c.m.Runner(c.ctx, "cache.grains", nil, ordered.New()); err == nil {
		t.Fatal("cache.grains without a target succeeded")
	}

	got, _, err := c.m.Gather(c.ctx, master.PublishRequest{Tgt: "web1", Fun: "test.echo", Arg: []any{"hi"}}, c.mo.Timeout)
	if err != nil || len(got) != 1 {
		t.Fatalf("gather: %v %v", got, err)
	}
	jid := got["web1"].Value("jid").(string)
	pj := c.run(t, "jobs.print_job", jid)
	job, _ := pj.Value(jid).(*ordered.Map)
	if job == nil || job.Value("Function") != "test.echo" || job.Value("Target") != "web1" {
		t.Fatalf("jobs.print_job = %v", pj)
	}
	ret := job.Value("Result").(*ordered.Map).Value("web1").(*ordered.Map)
	if ret.Value("return") != "hi" || job.Value("StartTime") == "" {
		t.Fatalf("jobs.print_job result = %v", job)
	}
	missing := c.run(t, "jobs.print_job", "20200101000000000000").Value("20200101000000000000").(*ordered.Map)
	if missing.Value("Error") == nil || missing.Value("Result").(*ordered.Map).Len() != 0 {
		t.Fatalf("jobs.print_job of an unknown jid = %v", missing)
	}
}
