package master

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/jobcache"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/testsupport/dbtest"
)

// BenchmarkListJobs is salt-run jobs.list_jobs over 10,000 jobs through
// the local socket, as bench/minionswarm -list-jobs times it: the
// runner, its answer stored as the runner job's return, the reply
// encoded, sent and decoded. Each job cache is filled once; every call
// adds its own runner job, as salt-run's do.
func BenchmarkListJobs(b *testing.B) {
	caches := []struct {
		name  string
		start func(testing.TB) *dbtest.Server
		raw   func(*dbtest.Server) *ordered.Map
	}{
		{"local_cache", nil, func(*dbtest.Server) *ordered.Map { return ordered.New() }},
		{"pgjsonb", dbtest.Postgres, func(s *dbtest.Server) *ordered.Map {
			return ordered.FromPairs("master_job_cache", "pgjsonb", "returner.pgjsonb.host", s.Host, "returner.pgjsonb.port", s.Port,
				"returner.pgjsonb.user", s.User, "returner.pgjsonb.pass", s.Pass, "returner.pgjsonb.db", s.DB)
		}},
		{"mysql", dbtest.MariaDB, func(s *dbtest.Server) *ordered.Map {
			return ordered.FromPairs("master_job_cache", "mysql", "mysql.host", s.Host, "mysql.port", s.Port,
				"mysql.user", s.User, "mysql.pass", s.Pass, "mysql.db", s.DB)
		}},
	}
	for _, c := range caches {
		b.Run(c.name, func(b *testing.B) {
			var srv *dbtest.Server
			if c.start != nil {
				srv = c.start(b)
			}
			o := testOptions(b.TempDir())
			o.Raw = c.raw(srv)
			o.Raw.Set("id", "bench_master")
			m, err := New(o, slog.New(slog.DiscardHandler))
			if err != nil {
				b.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if err := m.Start(ctx); err != nil {
				b.Fatal(err)
			}
			defer m.Stop()
			seedJobs(b, ctx, m.store(), 10000)
			call := func() int {
				cl, err := Dial(ctx, o.LocalSocket())
				if err != nil {
					b.Fatal(err)
				}
				defer cl.Close()
				v, err := cl.Runner(ctx, "jobs.list_jobs", nil, nil)
				if err != nil {
					b.Fatal(err)
				}
				return v.(*ordered.Map).Len()
			}
			call()
			b.ResetTimer()
			for b.Loop() {
				if n := call(); n < 10000 {
					b.Fatalf("listed %d jobs", n)
				}
			}
		})
	}
}

// seedJobs saves loads until the store holds n jobs of the last hours.
func seedJobs(b *testing.B, ctx context.Context, st jobcache.Store, n int) {
	base := time.Now().Add(-3 * time.Hour)
	for i := range n {
		jid := fmt.Sprintf("%s%06d", base.Add(time.Duration(i)*time.Second).Format("20060102150405"), i)
		load := ordered.FromPairs("fun", "test.arg", "arg", []any{"a", i}, "tgt", "web*", "tgt_type", "glob", "user", "root", "jid", jid)
		if err := st.SaveLoad(ctx, jid, load, []string{"web1", "web2"}); err != nil {
			b.Fatal(err)
		}
	}
	type pender interface{ Pending() int }
	if p, ok := st.(pender); ok {
		for p.Pending() > 0 {
			time.Sleep(50 * time.Millisecond)
		}
	}
}
