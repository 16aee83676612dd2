package master

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/testsupport/dbtest"
)

// lockedBuf is a log sink safe for the master's goroutines.
type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
func (l *lockedBuf) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

func TestListJobsFilters(t *testing.T) {
	m, ctx := startMaster(t)
	jobs := []struct {
		jid, fun string
		tgt      any
		md       *ordered.Map
	}{
		{"20260301100000000000", "test.ping", "web*", nil},
		{"20260302100000000000", "pkg.install", []any{"db1", "db2"}, ordered.FromPairs("run", "a")},
		{"20260303100000000000", "test.echo", "db1", ordered.FromPairs("run", "b")},
	}
	for _, j := range jobs {
		load := ordered.FromPairs("fun", j.fun, "tgt", j.tgt, "tgt_type", "glob", "arg", []any{}, "jid", j.jid)
		if j.md != nil {
			load.Set("metadata", j.md)
		}
		if err := m.jobs.SaveLoad(ctx, j.jid, load, nil); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		kw   *ordered.Map
		want []string
	}{
		{"all", ordered.New(), []string{"20260301100000000000", "20260302100000000000", "20260303100000000000"}},
		{"function glob", ordered.FromPairs("search_function", "test.*"), []string{"20260301100000000000", "20260303100000000000"}},
		{"functions comma-separated", ordered.FromPairs("search_function", "pkg.install, test.echo"), []string{"20260302100000000000", "20260303100000000000"}},
		{"function list", ordered.FromPairs("search_function", []any{"pkg.*"}), []string{"20260302100000000000"}},
		{"target in a list target", ordered.FromPairs("search_target", "db2"), []string{"20260302100000000000"}},
		{"target glob", ordered.FromPairs("search_target", "db*"), []string{"20260302100000000000", "20260303100000000000"}},
		{"metadata", ordered.FromPairs("search_metadata", ordered.FromPairs("run", "b")), []string{"20260303100000000000"}},
		{"start_time", ordered.FromPairs("start_time", "2026, Mar 02 00:00"), []string{"20260302100000000000", "20260303100000000000"}},
		{"end_time ISO", ordered.FromPairs("end_time", "2026-03-02T12:00:00"), []string{"20260301100000000000", "20260302100000000000"}},
		{"all filters", ordered.FromPairs("search_function", "*", "search_target", "db*", "start_time", "2026-03-03"), []string{"20260303100000000000"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := m.Runner(ctx, "jobs.list_jobs", nil, tc.kw)
			if err != nil {
				t.Fatal(err)
			}
			got := v.(*ordered.Map).StringKeys()
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Error(d)
			}
		})
	}
	if _, err := m.Runner(ctx, "jobs.list_jobs", nil, ordered.FromPairs("search_fun", "x")); err == nil ||
		!strings.Contains(err.Error(), "unexpected keyword argument 'search_fun'") {
		t.Errorf("unknown keyword: %v", err)
	}
	if _, err := m.Runner(ctx, "jobs.list_jobs", nil, ordered.FromPairs("start_time", "someday")); err == nil {
		t.Error("an unreadable start_time was accepted")
	}
	v, _ := m.Runner(ctx, "jobs.list_jobs", nil, ordered.FromPairs("outputter", "yaml"))
	if v.(*ordered.Map).Value("outputter") != "yaml" {
		t.Errorf("outputter: %v", v)
	}
}

// TestDatabaseDownAtStart: a master whose pgjsonb database is down
// starts, says so once, records runner jobs and answers for them from
// its spool, and writes them when the database comes up.
func TestDatabaseDownAtStart(t *testing.T) {
	pg := dbtest.Postgres(t)
	pg.Stop()
	dir := t.TempDir()
	o := DefaultOptions()
	o.Interface, o.PublishPort, o.RetPort = "127.0.0.1", 0, 0
	o.PKIDir, o.CacheDir, o.SockDir = dir+"/pki", dir+"/cache", dir+"/sock"
	o.Raw = ordered.FromPairs("master_job_cache", "pgjsonb", "returner.pgjsonb.host", pg.Host, "returner.pgjsonb.port", pg.Port,
		"returner.pgjsonb.user", pg.User, "returner.pgjsonb.pass", pg.Pass, "returner.pgjsonb.db", pg.DB, "id", "m_master")
	logs := &lockedBuf{}
	m, err := New(o, slog.New(slog.NewTextHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := m.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer m.Stop()
	var jids []string
	for range 3 {
		if _, err := m.runRunner(ctx, m.newJID(ctx), "jobs.list_jobs", nil, nil, "tester", true); err != nil {
			t.Fatal(err)
		}
	}
	v, err := m.Runner(ctx, "jobs.list_jobs", nil, ordered.FromPairs("search_function", "runner.jobs.*"))
	if err != nil {
		t.Fatal(err)
	}
	jids = v.(*ordered.Map).StringKeys()
	if len(jids) != 3 {
		t.Fatalf("list_jobs while the database is down: %v", jids)
	}
	r, _ := m.Runner(ctx, "jobs.lookup_jid", []any{jids[0]}, nil)
	if !r.(*ordered.Map).Has("m_master") {
		t.Errorf("lookup_jid from the spool: %v", r)
	}
	if err := pg.Start(); err != nil {
		t.Fatal(err)
	}
	db, err := pg.SQL()
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	deadline := time.Now().Add(45 * time.Second)
	n := 0
	for time.Now().Before(deadline) {
		if err := db.QueryRow("SELECT COUNT(*) FROM salt_returns WHERE fun = 'runner.jobs.list_jobs'").Scan(&n); err == nil && n == 3 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if n != 3 {
		t.Fatalf("%d runner returns in the database after it came back; log:\n%s", n, logs)
	}
	if c := strings.Count(logs.String(), "the database is unreachable"); c != 1 {
		t.Errorf("the outage was logged %d times:\n%s", c, logs)
	}
	if strings.Contains(logs.String(), pg.Pass) {
		t.Error("the password reached the log")
	}
}
