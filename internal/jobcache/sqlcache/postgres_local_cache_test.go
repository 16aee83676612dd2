package sqlcache

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/jobcache"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/testsupport/dbtest"
)

// openPLC opens a postgres_local_cache store with its options found as
// a master finds them, under master_job_cache.postgres.*.
func openPLC(t *testing.T, srv *dbtest.Server, keep time.Duration) *Store {
	t.Helper()
	raw := map[string]any{
		"master_job_cache.postgres.host": srv.Host, "master_job_cache.postgres.port": srv.Port,
		"master_job_cache.postgres.user": srv.User, "master_job_cache.postgres.passwd": srv.Pass,
		"master_job_cache.postgres.db": srv.DB,
	}
	st, err := Open(context.Background(), plcDialect{}, jobcache.Config{Lookup: func(k string) any { return raw[k] },
		CacheDir: t.TempDir(), MasterID: "m1_master", KeepJobs: keep, Log: &logBuf{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// plainSQL is a connection of the store's user, as a dashboard's.
func plainSQL(t *testing.T, srv *dbtest.Server) *sql.DB {
	t.Helper()
	db, err := srv.SQL()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestPostgresLocalCache stores a job, its returns and an event, reads
// the tables back with plain SQL as Salt's module writes them, then the
// returner functions' answers, and a row written by Salt itself.
func TestPostgresLocalCache(t *testing.T) {
	srv := dbtest.Postgres(t)
	ctx := context.Background()
	st := openPLC(t, srv, 0)
	jid := "20261201020304123456"
	load := ordered.FromPairs("fun", "test.arg", "arg", []any{"a", 1}, "tgt", []any{"web1", "web2"}, "tgt_type", "list",
		"user", "root", "jid", jid, "kwargs", ordered.FromPairs("delimiter", ":"))
	if err := st.SaveLoad(ctx, jid, load, []string{"web1", "web2"}); err != nil {
		t.Fatal(err)
	}
	if err := st.Returner(ctx, ret(jid, "web1", "test.arg", ordered.FromPairs("args", []any{"a", 1}))); err != nil {
		t.Fatal(err)
	}
	noSuccess := ordered.FromPairs("id", "web2", "return", true, "jid", jid, "fun", "test.arg")
	if err := st.Returner(ctx, noSuccess); err != nil {
		t.Fatal(err)
	}
	// Read your writes before the writer sends them.
	if l, err := st.GetLoad(ctx, jid); err != nil || l.Value("tgt") != "['web1', 'web2']" {
		t.Fatalf("get_load from the spool = %v, %v", l, err)
	}
	if err := st.EventReturn(ctx, []jobcache.Event{{Tag: "salt/job/" + jid + "/new", Data: ordered.FromPairs("jid", jid)}}); err != nil {
		t.Fatal(err)
	}
	waitWritten(t, st)

	db := plainSQL(t, srv)
	var row [9]string
	var started time.Time
	err := db.QueryRow("SELECT started, tgt_type, cmd, tgt, kwargs, ret, username, arg, fun, jid FROM jids").Scan(
		&started, &row[0], &row[1], &row[2], &row[3], &row[4], &row[5], &row[6], &row[7], &row[8])
	if err != nil {
		t.Fatal(err)
	}
	want := [9]string{"list", "None", "['web1', 'web2']", "{'delimiter': ':'}", "None", "root", `["a", 1]`, "test.arg", jid}
	if diff := cmp.Diff(want, row); diff != "" {
		t.Errorf("jids row (-want +got):\n%s", diff)
	}
	wantStart := time.Date(2026, 12, 1, 2, 3, 4, 123456000, time.Local)
	if !started.Equal(wantStart) {
		t.Errorf("started = %v, want %v", started, wantStart)
	}
	rets := map[string][2]any{}
	rows, err := db.Query("SELECT id, return, success FROM salt_returns WHERE jid = $1", jid)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, r string
		var succ sql.NullBool
		if err := rows.Scan(&id, &r, &succ); err != nil {
			t.Fatal(err)
		}
		var s any
		if succ.Valid {
			s = succ.Bool
		}
		rets[id] = [2]any{r, s}
	}
	rows.Close()
	wantRets := map[string][2]any{
		"web1": {`{"return": "{'args': ['a', 1]}", "retcode": 0, "success": true}`, true},
		"web2": {`{"return": "True"}`, nil},
	}
	if diff := cmp.Diff(wantRets, rets); diff != "" {
		t.Errorf("salt_returns (-want +got):\n%s", diff)
	}
	if n := count(t, db, "SELECT COUNT(*) FROM salt_events WHERE master_id = 'm1_master' AND data = $1", `{"jid": "`+jid+`"}`); n != 1 {
		t.Errorf("salt_events rows = %d", n)
	}

	// A return Salt's module wrote in its old format, the bare return.
	if _, err := db.Exec("INSERT INTO salt_returns (fun, jid, return, id) VALUES ('test.arg', $1, '5', 'old')", jid); err != nil {
		t.Fatal(err)
	}
	got, err := st.GetJID(ctx, jid)
	if err != nil {
		t.Fatal(err)
	}
	wantJID := ordered.FromPairs("web1", ordered.FromPairs("return", "{'args': ['a', 1]}", "retcode", 0, "success", true),
		"web2", ordered.FromPairs("return", "True"), "old", ordered.FromPairs("return", 5))
	if !ordered.Equal(got, wantJID) {
		t.Errorf("get_jid = %v, want %v", got, wantJID)
	}
	jobs, err := st.GetJIDs(ctx)
	if err != nil || len(jobs) != 1 {
		t.Fatalf("get_jids = %v, %v", jobs, err)
	}
	// _format_jid_instance's summary: Target as the str() save_load wrote.
	wantSummary := ordered.FromPairs("Function", "test.arg", "Arguments", []any{"a", 1}, "Target", "['web1', 'web2']",
		"Target-type", "list", "User", "root", "StartTime", "2026, Dec 01 02:03:04.123456")
	if s := jobcache.FormatJIDInstance(jobs[0].JID, jobs[0].Load); !ordered.Equal(s, wantSummary) {
		t.Errorf("list_jobs entry = %v, want %v", s, wantSummary)
	}
	if _, err := st.GetLoad(ctx, "20000101000000000000"); !errors.Is(err, jobcache.ErrUnknownJob) {
		t.Errorf("unknown load: %v", err)
	}
	// unique_jid's jids do not fit varchar(20): refused with a log line.
	if err := st.SaveLoad(ctx, jid+"_123", load, nil); !errors.Is(err, ErrRefused) {
		t.Errorf("long jid: %v", err)
	}
}

// TestPostgresLocalCacheKeepJobs: get_jids leaves out jobs started
// before keep_jobs, as Salt's module does, and clean_old_jobs deletes
// them and their returns.
func TestPostgresLocalCacheKeepJobs(t *testing.T) {
	srv := dbtest.Postgres(t)
	ctx := context.Background()
	st := openPLC(t, srv, 24*time.Hour)
	old := time.Now().Add(-48*time.Hour).Format("20060102150405") + "000001"
	fresh := jobcache.NewJID(false)
	for _, jid := range []string{old, fresh} {
		if err := st.SaveLoad(ctx, jid, ordered.FromPairs("fun", "test.ping", "tgt", "*", "tgt_type", "glob", "user", "root"), nil); err != nil {
			t.Fatal(err)
		}
	}
	waitWritten(t, st)
	db := plainSQL(t, srv)
	if _, err := db.Exec("INSERT INTO salt_returns (fun, jid, return, id, added) VALUES ('test.ping', $1, '{\"return\": \"True\"}', 'm', NOW() - interval '2 days')", old); err != nil {
		t.Fatal(err)
	}
	jobs, err := st.GetJIDs(ctx)
	if err != nil || len(jobs) != 1 || jobs[0].JID != fresh {
		t.Fatalf("get_jids = %v, %v; want only %s", jobs, err, fresh)
	}
	n, err := st.CleanOldJobs(ctx, 24*time.Hour)
	if err != nil || n != 1 {
		t.Fatalf("clean_old_jobs = %d, %v", n, err)
	}
	if c := count(t, db, "SELECT COUNT(*) FROM jids"); c != 1 {
		t.Errorf("jids rows after clean-up = %d", c)
	}
	if c := count(t, db, "SELECT COUNT(*) FROM salt_returns"); c != 0 {
		t.Errorf("salt_returns rows after clean-up = %d", c)
	}
}
