package main

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/jid"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
	"github.com/brinesalt/brine/internal/testsupport/dbtest"
	"github.com/brinesalt/brine/internal/testsupport/testhosts"
	"github.com/brinesalt/brine/master"
)

// TestE2EJobCache checks that salt-ssh runs land in the master's job
// cache: a master sharing the cachedir shows them through
// jobs.lookup_jid, jobs.list_jobs and jobs.list_job, a shell run (-r) as
// ssh._raw, and a host that fails is recorded with its retcode.
func TestE2EJobCache(t *testing.T) {
	c := testhosts.New(t, 2)
	e := newEnv(t, c, true)
	echo := jid.New(time.Now())
	if _, code, stderr := e.saltSSH("--jid", echo, "*", "test.echo", "hi"); code != 0 {
		t.Fatalf("test.echo: %d %s", code, stderr)
	}
	raw := jid.New(time.Now().Add(time.Second))
	if _, code, _ := e.saltSSH("--jid", raw, "-r", "host2", "echo out; exit 3"); code != 20 {
		t.Fatalf("raw run exit %d, want 20", code)
	}

	m, ctx := startMaster(t, e.dir+"/cache", nil)
	runner := func(fun string, args ...any) *ordered.Map {
		v, err := m.Runner(ctx, fun, args, ordered.New())
		if err != nil {
			t.Fatalf("%s: %v", fun, err)
		}
		return v.(*ordered.Map)
	}

	// Salt stores salt-ssh's per-host data whole, so lookup_jid shows
	// {return, retcode} under each host.
	got := runner("jobs.lookup_jid", echo)
	for _, h := range []string{"host1", "host2"} {
		r, _ := got.Value(h).(*ordered.Map)
		if r == nil || r.Value("return") != "hi" {
			t.Fatalf("lookup_jid %s: %v", h, got)
		}
	}
	jobs := runner("jobs.list_jobs")
	info, _ := jobs.Value(echo).(*ordered.Map)
	if info == nil || info.Value("Function") != "test.echo" || info.Value("Target") != "*" || info.Value("Target-type") != "glob" {
		t.Fatalf("list_jobs: %v", jobs)
	}
	if info, _ := jobs.Value(raw).(*ordered.Map); info == nil || info.Value("Function") != "ssh._raw" {
		t.Fatalf("list_jobs raw: %v", jobs)
	}
	job := runner("jobs.list_job", raw)
	res := job.Value("Result").(*ordered.Map).Value("host2").(*ordered.Map)
	if rc, _ := protocol.AsInt(res.Value("retcode")); rc != 3 || res.Value("success") != false {
		t.Fatalf("list_job raw: retcode %v success %v", res.Value("retcode"), res.Value("success"))
	}
	if ms := job.Value("Minions").([]any); len(ms) != 1 || ms[0] != "host2" {
		t.Fatalf("list_job raw minions: %v", job)
	}
}

// TestE2EJobCachePgjsonb: with master_job_cache: pgjsonb a salt-ssh
// run lands in PostgreSQL, where a master reading the same database
// (and no shared cachedir) looks it up.
func TestE2EJobCachePgjsonb(t *testing.T) {
	pg := dbtest.Postgres(t)
	c := testhosts.New(t, 1)
	e := newEnv(t, c, true)
	conf := fmt.Sprintf("master_job_cache: pgjsonb\nreturner.pgjsonb.host: %s\nreturner.pgjsonb.port: %d\nreturner.pgjsonb.user: %s\n"+
		"returner.pgjsonb.pass: %s\nreturner.pgjsonb.db: %s\n", pg.Host, pg.Port, pg.User, pg.Pass, pg.DB)
	e.writeMaster(conf)
	echo := jid.New(time.Now())
	if _, code, stderr := e.saltSSH("--jid", echo, "*", "test.echo", "in pg"); code != 0 {
		t.Fatalf("test.echo: %d %s", code, stderr)
	}
	db, err := pg.SQL()
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM salt_returns WHERE jid = $1 AND id = 'host1' AND fun = 'test.echo'", echo).Scan(&n); err != nil || n != 1 {
		t.Fatalf("salt_returns rows for the salt-ssh run: %d, %v", n, err)
	}
	m, ctx := startMaster(t, t.TempDir(), ordered.FromPairs("master_job_cache", "pgjsonb", "returner.pgjsonb.host", pg.Host,
		"returner.pgjsonb.port", pg.Port, "returner.pgjsonb.user", pg.User, "returner.pgjsonb.pass", pg.Pass, "returner.pgjsonb.db", pg.DB))
	v, err := m.Runner(ctx, "jobs.lookup_jid", []any{echo}, ordered.New())
	r, _ := v.(*ordered.Map).Value("host1").(*ordered.Map)
	if err != nil || r == nil || r.Value("return") != "in pg" {
		t.Fatalf("lookup_jid from the database: %v, %v", v, err)
	}
}

// startMaster starts a master on loopback with the job cache in
// cachedir (and raw options), stopped with the test.
func startMaster(t *testing.T, cachedir string, raw *ordered.Map) (*master.Master, context.Context) {
	t.Helper()
	mo := master.DefaultOptions()
	mo.Interface, mo.PublishPort, mo.RetPort = "127.0.0.1", 0, 0
	dir := t.TempDir()
	mo.PKIDir, mo.SockDir, mo.CacheDir = dir+"/pki", dir+"/sock", cachedir
	if raw != nil {
		mo.Raw = raw
	}
	m, err := master.New(mo, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	if err := m.Start(ctx); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Stop(); cancel() })
	return m, ctx
}
