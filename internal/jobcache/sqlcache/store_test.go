package sqlcache

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/jobcache"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/testsupport/dbtest"
)

// server is one of the two kinds under test.
type server struct {
	name  string
	d     dialect
	start func(testing.TB) *dbtest.Server
}

var servers = []server{
	{"pgjsonb", pgDialect{}, dbtest.Postgres},
	{"mysql", mysqlDialect{}, dbtest.MariaDB},
}

func options(s *dbtest.Server) map[string]any {
	return map[string]any{"host": s.Host, "port": s.Port, "user": s.User, "pass": s.Pass, "db": s.DB}
}

// logBuf collects log lines.
type logBuf struct {
	mu    sync.Mutex
	lines []string
}

func (l *logBuf) add(level, msg string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, level+" "+msg+" "+fmt.Sprint(args...))
}
func (l *logBuf) Info(msg string, args ...any)  { l.add("INFO", msg, args...) }
func (l *logBuf) Warn(msg string, args ...any)  { l.add("WARN", msg, args...) }
func (l *logBuf) Error(msg string, args ...any) { l.add("ERROR", msg, args...) }
func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

func openStore(t *testing.T, d dialect, srv *dbtest.Server, cache string, direct bool, log jobcache.Logger) *Store {
	t.Helper()
	st, err := Open(context.Background(), d, jobcache.Config{Options: options(srv), CacheDir: cache, MasterID: "m1_master", Direct: direct, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// waitWritten waits until the spool is empty.
func waitWritten(t *testing.T, st *Store) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for st.Pending() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d writes still pending", st.Pending())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func count(t *testing.T, db *sql.DB, q string, args ...any) int {
	t.Helper()
	var n int
	if err := db.QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

func ret(jid, id, fun string, v any) *ordered.Map {
	return ordered.FromPairs("cmd", "_return", "id", id, "success", true, "return", v, "retcode", 0, "jid", jid, "fun", fun, "fun_args", []any{})
}

func TestStoreRoundTrip(t *testing.T) {
	for _, k := range servers {
		t.Run(k.name, func(t *testing.T) {
			srv := k.start(t)
			ctx := context.Background()
			log := &logBuf{}
			st := openStore(t, k.d, srv, t.TempDir(), false, log)
			defer st.Close()
			jid := "20261201020304123456"
			load := ordered.FromPairs("fun", "test.echo", "arg", []any{"hi"}, "tgt", "*", "tgt_type", "glob", "user", "root", "jid", jid,
				"kwargs", ordered.FromPairs("metadata", ordered.FromPairs("run", "a")))
			if err := st.SaveLoad(ctx, jid, load, []string{"m1", "m2"}); err != nil {
				t.Fatal(err)
			}
			for _, id := range []string{"m1", `it's "quoted"`} {
				if err := st.Returner(ctx, ret(jid, id, "test.echo", "hi ü")); err != nil {
					t.Fatal(err)
				}
			}
			// Read your writes, whether or not the writer got there.
			got, err := st.GetJID(ctx, jid)
			if err != nil || got.Len() != 2 {
				t.Fatalf("get_jid before the write = %v, %v", got, err)
			}
			waitWritten(t, st)
			db, err := srv.SQL()
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			// The rows as a dashboard reads them.
			var fun, success, retText, id string
			q := "SELECT fun, success, " + st.text("return") + ", id FROM salt_returns WHERE jid = " + st.d.ph(1) + " AND id = " + st.d.ph(2)
			if err := db.QueryRow(q, jid, "m1").Scan(&fun, &success, &retText, &id); err != nil {
				t.Fatal(err)
			}
			wantSucc := map[string]string{"pgjsonb": "true", "mysql": "1"}[k.name]
			if fun != "test.echo" || success != wantSucc || !strings.Contains(retText, `hi \u00fc`) && !strings.Contains(retText, "hi ü") {
				t.Errorf("row = %q %q %q", fun, success, retText)
			}
			l, err := st.GetLoad(ctx, jid)
			if err != nil || l.Value("fun") != "test.echo" || len(l.Value("Minions").([]any)) != 2 {
				t.Fatalf("get_load = %v, %v", l, err)
			}
			if _, err := st.GetLoad(ctx, "20000101000000000000"); !errors.Is(err, jobcache.ErrUnknownJob) {
				t.Errorf("unknown load: %v", err)
			}
			got, _ = st.GetJID(ctx, jid)
			if diff := cmp.Diff([]string{"it's \"quoted\"", "m1"}, sortedKeys(got)); diff != "" {
				t.Error(diff)
			}
			if got.Value("m1").(*ordered.Map).Value("return") != "hi ü" {
				t.Errorf("full_ret = %v", got.Value("m1"))
			}
			jobs, _ := st.GetJIDs(ctx)
			if len(jobs) != 1 || jobcache.FormatJIDInstance(jobs[0].JID, jobs[0].Load).Value("Metadata") == nil {
				t.Errorf("get_jids = %v", jobs)
			}
			fn, _ := st.GetFun(ctx, "test.echo")
			mins, _ := st.GetMinions(ctx)
			if fn.Len() != 2 || len(mins) != 2 {
				t.Errorf("get_fun = %v, get_minions = %v", fn, mins)
			}
			if err := st.EventReturn(ctx, []jobcache.Event{{Tag: "salt/job/x/new", Data: ordered.FromPairs("a", 1)}}); err != nil {
				t.Fatal(err)
			}
			waitWritten(t, st)
			if n := count(t, db, "SELECT COUNT(*) FROM salt_events WHERE master_id = 'm1_master'"); n != 1 {
				t.Errorf("events = %d", n)
			}
		})
	}
}

func sortedKeys(m *ordered.Map) []string {
	out := m.StringKeys()
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// TestBadRowsDoNotLoseTheBatch sends a batch with rows the columns or
// the database refuse among good ones: the good ones are stored, the
// bad ones refused with a log line or stored cleaned.
func TestBadRowsDoNotLoseTheBatch(t *testing.T) {
	for _, k := range servers {
		t.Run(k.name, func(t *testing.T) {
			srv := k.start(t)
			ctx := context.Background()
			log := &logBuf{}
			st := openStore(t, k.d, srv, t.TempDir(), false, log)
			defer st.Close()
			jid := "20261201020304000001"
			rets := []*ordered.Map{
				ret(jid, "good1", "test.ping", true),
				ret(jid, "m-longfun", strings.Repeat("f", 51), true),
				ret(jid, strings.Repeat("i", 256), "test.ping", true),
				ret(jid, "m-nul", "cmd.run", "a\x00b"),
				ret(jid, "m-bad-utf8", "cmd.run", "caf\xe9"),
				ret(jid, "emoji-😀", "test.ping", true),
				ret(jid, "good2", "test.ping", true),
			}
			for _, r := range rets {
				_ = st.Returner(ctx, r)
			}
			waitWritten(t, st)
			db, _ := srv.SQL()
			defer db.Close()
			ids := map[string]bool{}
			rows, err := db.Query("SELECT id FROM salt_returns WHERE jid = '" + jid + "'")
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var id string
				rows.Scan(&id)
				ids[id] = true
			}
			rows.Close()
			for _, id := range []string{"good1", "good2", "m-nul", "m-bad-utf8"} {
				if !ids[id] {
					t.Errorf("%s not stored; log:\n%s", id, log)
				}
			}
			if ids["m-longfun"] || len(ids) > 5 {
				t.Errorf("stored %v", ids)
			}
			if !strings.Contains(log.String(), "fun is 51 characters") || !strings.Contains(log.String(), "id is 256 characters") {
				t.Errorf("no clear refusal in the log:\n%s", log)
			}
			if k.name == "mysql" && ids["emoji-😀"] {
				// Salt's utf8 (three-byte) id column cannot hold it; it is
				// refused alone, with a log line.
				t.Errorf("a four-byte id went into a utf8 column")
			}
		})
	}
}

// TestDatabaseLostMidStream stops the database while returns arrive,
// and kills it once; every return arrives exactly once after it is
// back, and a store reopened on the same spool replays what was left.
func TestDatabaseLostMidStream(t *testing.T) {
	for _, k := range servers {
		t.Run(k.name, func(t *testing.T) {
			srv := k.start(t)
			ctx := context.Background()
			cache := t.TempDir()
			log := &logBuf{}
			st := openStore(t, k.d, srv, cache, false, log)
			jid := "20261201020304000002"
			if err := st.SaveLoad(ctx, jid, ordered.FromPairs("fun", "test.ping"), nil); err != nil {
				t.Fatal(err)
			}
			n := 0
			send := func(k int) {
				for range k {
					n++
					if err := st.Returner(ctx, ret(jid, fmt.Sprintf("m%04d", n), "test.ping", true)); err != nil {
						t.Fatal(err)
					}
				}
			}
			send(200)
			srv.Stop()
			send(300)
			// The store goes away with writes pending, as a master that
			// is restarted while its database is down.
			st.Close()
			if err := srv.Start(); err != nil {
				t.Fatal(err)
			}
			st = openStore(t, k.d, srv, cache, false, log)
			send(200)
			srv.Kill()
			send(100)
			if err := srv.Start(); err != nil {
				t.Fatal(err)
			}
			send(200)
			waitWritten(t, st)
			st.Close()
			db, _ := srv.SQL()
			defer db.Close()
			if got := count(t, db, "SELECT COUNT(*) FROM salt_returns WHERE jid = '"+jid+"'"); got != n {
				t.Errorf("%d rows for %d returns; log:\n%s", got, n, log)
			}
			if got := count(t, db, "SELECT COUNT(DISTINCT id) FROM salt_returns WHERE jid = '"+jid+"'"); got != n {
				t.Errorf("%d distinct minions for %d returns", got, n)
			}
			if c := strings.Count(log.String(), "the database is unreachable"); c == 0 || c > 4 {
				t.Errorf("unreachable said %d times:\n%s", c, log)
			}
		})
	}
}

// TestCleanOldJobs ages rows and cleans from two stores at once, as two
// masters sharing the database do: the work is done once.
func TestCleanOldJobs(t *testing.T) {
	for _, k := range servers {
		t.Run(k.name, func(t *testing.T) {
			srv := k.start(t)
			ctx := context.Background()
			open := func() *Store {
				st, err := Open(ctx, k.d, jobcache.Config{Options: options(srv), CacheDir: t.TempDir(), Direct: true, ArchiveJobs: true})
				if err != nil {
					t.Fatal(err)
				}
				return st
			}
			a, b := open(), open()
			defer a.Close()
			defer b.Close()
			for i := range 20 {
				jid := fmt.Sprintf("202612010203040000%02d", i)
				a.SaveLoad(ctx, jid, ordered.FromPairs("fun", "test.ping"), nil)
				a.Returner(ctx, ret(jid, "m1", "test.ping", true))
			}
			a.EventReturn(ctx, []jobcache.Event{{Tag: "t", Data: ordered.New()}})
			db, _ := srv.SQL()
			defer db.Close()
			age := "UPDATE salt_returns SET alter_time = alter_time - INTERVAL '2 hours' WHERE jid < '20261201020304000010'"
			ageEv := "UPDATE salt_events SET alter_time = alter_time - INTERVAL '2 hours'"
			if k.name == "mysql" {
				age = "UPDATE salt_returns SET alter_time = alter_time - INTERVAL 2 HOUR WHERE jid < '20261201020304000010'"
				ageEv = "UPDATE salt_events SET alter_time = alter_time - INTERVAL 2 HOUR"
			}
			for _, q := range []string{age, ageEv} {
				if _, err := db.Exec(q); err != nil {
					t.Fatal(err)
				}
			}
			var wg sync.WaitGroup
			var na, nb int
			var ea, eb error
			wg.Add(2)
			go func() { defer wg.Done(); na, ea = a.CleanOldJobs(ctx, time.Hour) }()
			go func() { defer wg.Done(); nb, eb = b.CleanOldJobs(ctx, time.Hour) }()
			wg.Wait()
			if ea != nil || eb != nil {
				t.Fatal(ea, eb)
			}
			if na+nb != 10 {
				t.Errorf("cleaned %d + %d jobs, want 10 in all", na, nb)
			}
			if c := count(t, db, "SELECT COUNT(*) FROM jids"); c != 10 {
				t.Errorf("%d jobs left", c)
			}
			if c := count(t, db, "SELECT COUNT(*) FROM salt_returns"); c != 10 {
				t.Errorf("%d returns left", c)
			}
			if c := count(t, db, "SELECT COUNT(*) FROM salt_events"); c != 0 {
				t.Errorf("%d events left", c)
			}
			// archive_jobs: what went is in the *_archive tables.
			for table, want := range map[string]int{"jids_archive": 10, "salt_returns_archive": 10, "salt_events_archive": 1} {
				if c := count(t, db, "SELECT COUNT(*) FROM "+table); c != want {
					t.Errorf("%s holds %d rows, want %d", table, c, want)
				}
			}
		})
	}
}

// TestSaveJobRows: a runner job saved in one call (its answer encoded
// once) leaves the rows SaveLoad and Returner leave.
func TestSaveJobRows(t *testing.T) {
	for _, k := range servers {
		t.Run(k.name, func(t *testing.T) {
			srv := k.start(t)
			ctx := context.Background()
			st := openStore(t, k.d, srv, t.TempDir(), false, &logBuf{})
			defer st.Close()
			data := ordered.FromPairs("fun", "runner.jobs.list_jobs", "user", "root", "return", ordered.FromPairs("2026", ordered.FromPairs("Function", "é")), "success", true)
			for i, jid := range []string{"20261201020304000001", "20261201020304000002"} {
				load := ordered.FromPairs("id", "m_master", "tgt", "m_master", "jid", jid, "return", data, "fun", "runner.jobs.list_jobs", "user", "root")
				r := ordered.FromPairs("id", "m_master", "jid", jid, "return", data, "retcode", 0, "success", true, "fun", "runner.jobs.list_jobs")
				if i == 0 {
					if err := st.SaveJob(ctx, jid, load, r); err != nil {
						t.Fatal(err)
					}
					continue
				}
				if err := st.SaveLoad(ctx, jid, load, nil); err != nil {
					t.Fatal(err)
				}
				if err := st.Returner(ctx, r); err != nil {
					t.Fatal(err)
				}
			}
			waitWritten(t, st)
			db, err := srv.SQL()
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			rows := map[string][3]string{}
			q := "SELECT j." + st.d.q("jid") + ", " + "j." + st.text("load") + ", r." + st.text("return") + ", r." + st.text("full_ret") +
				" FROM " + st.d.q("jids") + " j JOIN " + st.d.q("salt_returns") + " r ON r." + st.d.q("jid") + " = j." + st.d.q("jid")
			res, err := db.Query(q)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Close()
			for res.Next() {
				var jid string
				var v [3]string
				if err := res.Scan(&jid, &v[0], &v[1], &v[2]); err != nil {
					t.Fatal(err)
				}
				for i := range v {
					v[i] = strings.ReplaceAll(v[i], jid, "JID")
				}
				rows[jid] = v
			}
			if len(rows) != 2 {
				t.Fatalf("rows = %v", rows)
			}
			if diff := cmp.Diff(rows["20261201020304000002"], rows["20261201020304000001"]); diff != "" {
				t.Errorf("SaveJob's rows (-SaveLoad and Returner +SaveJob):\n%s", diff)
			}
		})
	}
}
