package main

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/brinesalt/brine/internal/testsupport/clustertest"
	"github.com/brinesalt/brine/internal/testsupport/dbtest"
)

// pgConf is the master config of a pgjsonb master_job_cache on srv.
func pgConf(srv *dbtest.Server) string {
	return fmt.Sprintf(`master_job_cache: pgjsonb
returner.pgjsonb.host: %s
returner.pgjsonb.port: %d
returner.pgjsonb.user: %s
returner.pgjsonb.pass: %s
returner.pgjsonb.db: %s
`, srv.Host, srv.Port, srv.User, srv.Pass, srv.DB)
}

// mysqlConf is the mysql returner's settings on srv, under prefix.
func mysqlConf(prefix string, srv *dbtest.Server) string {
	return fmt.Sprintf("%[1]smysql.host: %[2]s\n%[1]smysql.port: %[3]d\n%[1]smysql.user: %[4]s\n%[1]smysql.pass: %[5]s\n%[1]smysql.db: %[6]s\n",
		prefix, srv.Host, srv.Port, srv.User, srv.Pass, srv.DB)
}

// asyncJID publishes with --async and returns the jid.
func asyncJID(t *testing.T, c *clustertest.Cluster, args ...string) string {
	t.Helper()
	out, code := c.Run("salt", append(args, "--async")...)
	m := regexp.MustCompile(`\d{20}`).FindString(out)
	if code != 0 || m == "" {
		t.Fatalf("salt %v --async: %d %s", args, code, out)
	}
	return m
}

// tryCount is a COUNT(*), -1 while the query fails (no table yet).
func tryCount(db *sql.DB, q string, args ...any) int {
	var n int
	if err := db.QueryRow(q, args...).Scan(&n); err != nil {
		return -1
	}
	return n
}

func countRows(t *testing.T, db *sql.DB, q string, args ...any) int {
	t.Helper()
	var n int
	if err := db.QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// TestTwoMastersOnePgjsonb: two masters keep their jobs in one
// PostgreSQL (master_job_cache: pgjsonb); a job published on A is
// looked up and listed from B, and A persists its bus to MariaDB
// (event_return: mysql) with a blacklist.
func TestTwoMastersOnePgjsonb(t *testing.T) {
	pg := dbtest.Postgres(t)
	my := dbtest.MariaDB(t)
	a := clustertest.New(t, "auto_accept: True\n"+pgConf(pg)+"event_return: mysql\nevent_return_queue: 5\n"+
		"event_return_queue_max_seconds: 1\nevent_return_blacklist: ['salt/auth', 'minion_*']\n"+mysqlConf("", my))
	b := clustertest.New(t, pgConf(pg))
	a.StartMinion("m1", a.MinionConf("m1", "m1", ""))
	a.PingUntil("m1", "m1")

	jid := asyncJID(t, a, "m1", "test.echo", "from A")
	a.WaitFor("the return in the database", func() bool {
		out, _ := b.Run("salt-run", "jobs.lookup_jid", jid, "--out=json")
		return strings.Contains(out, `"m1": "from A"`)
	})
	out, code := b.Run("salt-run", "jobs.list_jobs", "search_function=test.echo", "--out=json")
	var jobs map[string]map[string]any
	if err := json.Unmarshal([]byte(out), &jobs); err != nil || code != 0 {
		t.Fatalf("list_jobs on B: %d %v %s", code, err, out)
	}
	if jobs[jid]["Function"] != "test.echo" || jobs[jid]["Target"] != "m1" {
		t.Errorf("list_jobs on B = %v", jobs)
	}
	for k, j := range jobs {
		if j["Function"] != "test.echo" {
			t.Errorf("search_function let %s (%v) through", k, j["Function"])
		}
	}
	out, _ = b.Run("salt-run", "jobs.list_job", jid, "--out=json")
	if !strings.Contains(out, `"Minions"`) || !strings.Contains(out, `"full_ret"`) && !strings.Contains(out, `"fun_args"`) {
		t.Errorf("list_job on B: %s", out)
	}

	// The tables as a Salt user's dashboard reads them.
	pdb, err := pg.SQL()
	if err != nil {
		t.Fatal(err)
	}
	defer pdb.Close()
	if n := countRows(t, pdb, "SELECT COUNT(*) FROM salt_returns WHERE jid = $1 AND id = 'm1' AND full_ret->>'fun' = 'test.echo' AND return = '\"from A\"'::jsonb", jid); n != 1 {
		t.Errorf("%d salt_returns rows for %s", n, jid)
	}
	if n := countRows(t, pdb, "SELECT COUNT(*) FROM jids WHERE jid = $1 AND load->>'fun' = 'test.echo'", jid); n != 1 {
		t.Errorf("%d jids rows for %s", n, jid)
	}
	mdb, err := my.SQL()
	if err != nil {
		t.Fatal(err)
	}
	defer mdb.Close()
	a.WaitFor("the events in MariaDB", func() bool {
		return tryCount(mdb, "SELECT COUNT(*) FROM salt_events WHERE tag = ?", "salt/job/"+jid+"/ret/m1") == 1
	})
	if n := countRows(t, mdb, "SELECT COUNT(*) FROM salt_events WHERE tag = 'salt/auth' OR tag LIKE 'minion\\_%'"); n != 0 {
		t.Errorf("%d blacklisted events stored", n)
	}
	if n := countRows(t, mdb, "SELECT COUNT(*) FROM salt_events WHERE tag = ? AND master_id LIKE '%_master'", "salt/job/"+jid+"/new"); n != 1 {
		t.Errorf("the new-job event of %s: %d rows", jid, n)
	}
	// The database goes away mid-run: the jobs published meanwhile are
	// answered, kept on A's disk and written once it is back, once each.
	pg.Stop()
	var during []string
	for i := range 3 {
		during = append(during, asyncJID(t, a, "m1", "test.echo", fmt.Sprintf("down %d", i)))
	}
	a.WaitFor("A answering from its spool", func() bool {
		out, _ := a.Run("salt-run", "jobs.lookup_jid", during[2], "--out=json")
		return strings.Contains(out, `"m1": "down 2"`)
	})
	if err := pg.Start(); err != nil {
		t.Fatal(err)
	}
	pdb2, err := pg.SQL()
	if err != nil {
		t.Fatal(err)
	}
	defer pdb2.Close()
	for _, j := range during {
		a.WaitFor("the return kept while the database was down", func() bool {
			return tryCount(pdb2, "SELECT COUNT(*) FROM salt_returns WHERE jid = $1", j) >= 1
		})
		if n := countRows(t, pdb2, "SELECT COUNT(*) FROM salt_returns WHERE jid = $1", j); n != 1 {
			t.Errorf("%d rows for %s", n, j)
		}
	}
	out, _ = b.Run("salt-run", "jobs.lookup_jid", during[0], "--out=json")
	if !strings.Contains(out, `"m1": "down 0"`) {
		t.Errorf("B after the outage: %s", out)
	}
	for name, log := range map[string]string{"A": a.Logs["master"].String(), "B": b.Logs["master"].String()} {
		if strings.Contains(log, pg.Pass) || strings.Contains(log, my.Pass) {
			t.Errorf("master %s logged a database password", name)
		}
	}
}

// TestReturnMySQLFromTheMinion: `salt --return mysql` and ext_job_cache
// make the minion write its return to MariaDB itself, with the
// settings of its own config, and --return_config picks a profile.
func TestReturnMySQLFromTheMinion(t *testing.T) {
	my := dbtest.MariaDB(t)
	c := clustertest.New(t, "auto_accept: True\n")
	c.StartMinion("m1", c.MinionConf("m1", "m1", mysqlConf("alternative.", my)+"mysql.host: 127.0.0.2\nmysql.port: 1\n"))
	c.PingUntil("m1", "m1")
	db, err := my.SQL()
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	out, code := c.Run("salt", "m1", "test.echo", "to mysql", "--return", "mysql", "--return_config", "alternative")
	if code != 0 || !strings.Contains(out, "to mysql") {
		t.Fatalf("salt --return mysql: %d %s", code, out)
	}
	c.WaitFor("the minion's row", func() bool {
		return tryCount(db, "SELECT COUNT(*) FROM salt_returns WHERE id = 'm1' AND fun = 'test.echo' AND `return` = '\"to mysql\"'") == 1
	})
	var success string
	if err := db.QueryRow("SELECT success FROM salt_returns WHERE id = 'm1'").Scan(&success); err != nil || success != "1" {
		t.Errorf("success = %q, %v (MySQLdb writes True as 1)", success, err)
	}
	// Without --return_config the flat keys point at nothing: the minion
	// logs the failure and the job still returns to the master.
	out, code = c.Run("salt", "m1", "test.ping", "--return", "mysql")
	if code != 0 || !strings.Contains(out, "True") {
		t.Fatalf("salt --return mysql with an unreachable database: %d %s", code, out)
	}
	c.WaitFor("the returner's failure in the minion log", func() bool {
		return strings.Contains(c.Logs["m1"].String(), "mysql returner could not connect")
	})
	if strings.Contains(c.Logs["m1"].String(), my.Pass) {
		t.Error("the minion logged the database password")
	}
}

// TestExtJobCacheMySQL: with ext_job_cache the minions write their
// returns to MariaDB themselves, the master only the load, and
// jobs.lookup_jid reads them back from there.
func TestExtJobCacheMySQL(t *testing.T) {
	my := dbtest.MariaDB(t)
	c := clustertest.New(t, "auto_accept: True\next_job_cache: mysql\n"+mysqlConf("", my))
	c.StartMinion("m1", c.MinionConf("m1", "m1", mysqlConf("", my)))
	c.PingUntil("m1", "m1")
	db, err := my.SQL()
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	jid := asyncJID(t, c, "m1", "test.echo", "ext")
	c.WaitFor("lookup_jid from the ext_job_cache", func() bool {
		out, _ := c.Run("salt-run", "jobs.lookup_jid", jid, "--out=json")
		return strings.Contains(out, `"m1": "ext"`)
	})
	if n := countRows(t, db, "SELECT COUNT(*) FROM salt_returns WHERE jid = ?", jid); n != 1 {
		t.Errorf("%d rows for one return (the master must not store it too)", n)
	}
	c.WaitFor("the load in jids", func() bool {
		return tryCount(db, "SELECT COUNT(*) FROM jids WHERE jid = ? AND `load` LIKE '%test.echo%'", jid) == 1
	})
}
