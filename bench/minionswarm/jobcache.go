package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/jobcache"
	_ "github.com/brinesalt/brine/internal/jobcache/sqlcache"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/testsupport/dbtest"
	"github.com/brinesalt/brine/master"
)

// cacheRun measures one master_job_cache under the swarm (-job-caches):
// how long after the last return every return is stored, jobs.lookup_jid
// of that job, jobs.list_jobs over -list-jobs jobs, and, for the
// databases, Salt's own per-return inserts (saltret.py) of as many rows.
type cacheRun struct {
	name    string
	srv     *dbtest.Server // nil for local_cache
	rounds  int
	jobs    int
	saltPy  string
	results []string
}

func (c *cacheRun) raw() *ordered.Map {
	raw := ordered.New()
	if c.srv == nil {
		return raw
	}
	raw.Set("master_job_cache", c.name)
	prefix := map[string]string{"pgjsonb": "returner.pgjsonb.", "mysql": "mysql.", "postgres_local_cache": "master_job_cache.postgres."}[c.name]
	pass := "pass"
	if c.name == "postgres_local_cache" {
		pass = "passwd"
	}
	for k, v := range map[string]any{"host": c.srv.Host, "port": c.srv.Port, "user": c.srv.User, pass: c.srv.Pass, "db": c.srv.DB} {
		raw.Set(prefix+k, v)
	}
	return raw
}

// configure points the master at this job cache.
func (c *cacheRun) configure(mo *master.Options) {
	raw := c.raw()
	raw.Range(func(k, v any) bool { mo.Raw.Set(k, v); return true })
}

// storedCount is how many returns of jid the cache holds, read as an
// outside reader would: rows in salt_returns, or minion directories.
func (c *cacheRun) storedCount(db *sql.DB, cacheDir, jid string) int {
	if db == nil {
		ents, _ := os.ReadDir(jobcache.New(cacheDir).JIDDir(jid))
		n := 0
		for _, e := range ents {
			if e.IsDir() {
				n++
			}
		}
		return n
	}
	var n int
	ph := "?"
	if c.name != "mysql" {
		ph = "$1"
	}
	_ = db.QueryRow("SELECT COUNT(*) FROM salt_returns WHERE jid = "+ph, jid).Scan(&n)
	return n
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

// measure runs the rounds against a connected swarm.
func (c *cacheRun) measure(ctx context.Context, b backend, cacheDir string, n int) error {
	var db *sql.DB
	if c.srv != nil {
		var err error
		if db, err = c.srv.SQL(); err != nil {
			return err
		}
		defer db.Close()
	}
	var stored, totals, lookups []time.Duration
	for r := range c.rounds {
		jid, got, _, first, last, err := b.ping(ctx)
		if err != nil {
			return err
		}
		// ping ends as the last return arrives.
		tLast := time.Now()
		tFirst := tLast.Add(first - last)
		deadline := time.Now().Add(2 * time.Minute)
		for c.storedCount(db, cacheDir, jid) < got && time.Now().Before(deadline) {
			time.Sleep(2 * time.Millisecond)
		}
		stored = append(stored, time.Since(tLast))
		totals = append(totals, time.Since(tFirst))
		t1 := time.Now()
		v, err := b.runner(ctx, "jobs.lookup_jid", []any{jid}, nil)
		if err != nil {
			return err
		}
		lookups = append(lookups, time.Since(t1))
		lm, _ := v.(*ordered.Map)
		fmt.Printf("  %s round %d: returned=%d stored=%d after_last_return=%s lookup_jid=%s (%d minions)\n", c.name, r+1, got,
			c.storedCount(db, cacheDir, jid), ms(stored[r]), ms(lookups[r]), lm.Len())
	}
	if err := c.seed(ctx, cacheDir); err != nil {
		return err
	}
	var lists []time.Duration
	var listed int
	for range 5 {
		t := time.Now()
		v, err := b.runner(ctx, "jobs.list_jobs", nil, nil)
		if err != nil {
			return err
		}
		lists = append(lists, time.Since(t))
		listed = v.(*ordered.Map).Len()
	}
	salt := "n/a"
	if c.srv != nil && c.saltPy != "" && c.name != "postgres_local_cache" { // saltret.py has mysql and pgjsonb
		secs, err := c.saltInserts(n)
		ours, err2 := c.brineInserts(ctx, cacheDir, n)
		if err = errors.Join(err, err2); err != nil {
			salt = err.Error()
		} else {
			salt = fmt.Sprintf("%.2f s vs %.3f s: %.0f×", secs, ours.Seconds(), secs/ours.Seconds())
		}
	}
	line := fmt.Sprintf("| %s | %d | %s | %s | %s | %d | %s | %s |", c.name, n, ms(median(stored)), ms(median(totals)), ms(median(lookups)),
		listed, ms(median(lists)), salt)
	c.results = append(c.results, line)
	fmt.Println(line)
	return nil
}

// seed adds jobs until the cache holds c.jobs, through a store of its
// own (the master's spool belongs to the master).
func (c *cacheRun) seed(ctx context.Context, cacheDir string) error {
	cfg := jobcache.Config{CacheDir: cacheDir + "-seed", Lookup: func(k string) any { return c.raw().Value(k) }}
	var st jobcache.Store
	var err error
	if c.srv == nil {
		st = jobcache.New(cacheDir)
	} else if st, err = jobcache.Open(ctx, c.name, cfg); err != nil {
		return err
	}
	defer st.Close()
	have, err := st.GetJIDs(ctx)
	if err != nil {
		return err
	}
	// Jobs of the last hours, which keep_jobs (24 h) leaves alone.
	base := time.Now().Add(-3 * time.Hour)
	for i := len(have); i < c.jobs; i++ {
		jid := fmt.Sprintf("%s%06d", base.Add(time.Duration(i)*time.Second).Format("20060102150405"), i%1000000)
		load := ordered.FromPairs("fun", "test.arg", "arg", []any{"a", i}, "tgt", "web*", "tgt_type", "glob", "user", "root", "jid", jid)
		if err := st.SaveLoad(ctx, jid, load, []string{"web1", "web2"}); err != nil {
			return err
		}
	}
	return nil // Close waits for the spool
}

// brineInserts times a store taking n returns (test.ping's, as
// saltret.py sends) until they are all in the database.
func (c *cacheRun) brineInserts(ctx context.Context, cacheDir string, n int) (time.Duration, error) {
	cfg := jobcache.Config{CacheDir: cacheDir + "-inserts", Lookup: func(k string) any { return c.raw().Value(k) }}
	st, err := jobcache.Open(ctx, c.name, cfg)
	if err != nil {
		return 0, err
	}
	jid := "20991231000000000001"
	t0 := time.Now()
	for i := range n {
		ret := ordered.FromPairs("cmd", "_return", "id", fmt.Sprintf("swarm-%05d", i), "success", true, "return", true,
			"retcode", 0, "jid", jid, "fun", "test.ping", "fun_args", []any{})
		if err := st.Returner(ctx, ret); err != nil {
			st.Close()
			return 0, err
		}
	}
	if err := st.Close(); err != nil { // Close waits for the writes
		return 0, err
	}
	return time.Since(t0), nil
}

// saltInserts runs saltret.py: Salt's returner's inserts of n returns
// with 5 worker processes, under Debian's python3 (its python3-psycopg2 and
// python3-mysqldb); the password goes on stdin.
func (c *cacheRun) saltInserts(n int) (float64, error) {
	cmd := exec.Command("/usr/bin/python3", c.saltPy, c.name, c.srv.Host, strconv.Itoa(c.srv.Port), c.srv.User, c.srv.DB,
		strconv.Itoa(n), "5", "20991231000000000000")
	cmd.Stdin = strings.NewReader(c.srv.Pass)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return 0, fmt.Errorf("saltret.py failed: %s", strings.TrimSpace(string(out)))
	}
	return strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
}

// writeRaw and readRaw keep master options in a 0600 JSON file.
func writeRaw(path string, raw *ordered.Map) error {
	b, err := raw.MarshalJSON()
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}

func readRaw(path string) (*ordered.Map, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m := ordered.New()
	return m, m.UnmarshalJSON(b)
}

// startCaches starts the database servers the runs need.
func startCaches(names string, rounds, jobs int) ([]*cacheRun, func(), error) {
	var runs []*cacheRun
	var servers []*dbtest.Server
	stop := func() {
		for _, s := range servers {
			s.Close()
		}
	}
	py, _ := filepath.Abs(filepath.Join("bench", "minionswarm", "saltret.py"))
	if _, err := os.Stat(py); err != nil {
		py = ""
	}
	for _, name := range strings.Split(names, ",") {
		c := &cacheRun{name: strings.TrimSpace(name), rounds: rounds, jobs: jobs, saltPy: py}
		var err error
		switch c.name {
		case "local_cache":
		case "pgjsonb", "postgres_local_cache":
			c.srv, err = dbtest.StartPostgres()
		case "mysql":
			c.srv, err = dbtest.StartMariaDB()
		default:
			err = fmt.Errorf("no job cache %q", c.name)
		}
		if err != nil {
			stop()
			return nil, nil, err
		}
		if c.srv != nil {
			servers = append(servers, c.srv)
		}
		runs = append(runs, c)
	}
	return runs, stop, nil
}
