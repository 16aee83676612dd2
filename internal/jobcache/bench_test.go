package jobcache

import (
	"context"
	"fmt"
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
)

// BenchmarkJob is the job cache's part of one local_async test.ping to
// one minion: prep_jid, save_load with the minion and the return.
func BenchmarkJob(b *testing.B) {
	c := New(b.TempDir())
	ctx := context.Background()
	for b.Loop() {
		jid, err := c.PrepJID(ctx, "")
		if err != nil {
			b.Fatal(err)
		}
		load := ordered.FromPairs("fun", "test.ping", "arg", []any{}, "tgt", "api-00001", "tgt_type", "glob", "jid", jid, "user", "apibench")
		if err := c.SaveLoad(ctx, jid, load, []string{"api-00001"}); err != nil {
			b.Fatal(err)
		}
		if err := c.Returner(ctx, (&protocol.Return{ID: "api-00001", JID: jid, Fun: "test.ping", Return: true, Success: true}).SaltMap()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGetJIDs is get_jids over 10,000 jobs, ten of them runner
// jobs whose load holds a 10,000-entry jobs.list_jobs answer, as the
// cache holds after a few salt-run jobs.list_jobs.
func BenchmarkGetJIDs(b *testing.B) {
	c := New(b.TempDir())
	ctx := context.Background()
	answer := ordered.New()
	for i := range 10000 {
		answer.Set(fmt.Sprintf("2026120201%010d", i), ordered.FromPairs("Function", "test.ping", "Arguments", []any{},
			"Target", "api-00001", "Target-type", "glob", "User", "root", "StartTime", "2026, Dec 02 01:00:00.000000"))
	}
	for i := range 10000 {
		jid := fmt.Sprintf("2026120201%010d", i)
		load := ordered.FromPairs("fun", "test.ping", "arg", []any{}, "tgt", "api-00001", "tgt_type", "glob", "jid", jid, "user", "root")
		if i%1000 == 0 {
			load = ordered.FromPairs("id", "m_master", "tgt", "m_master", "jid", jid, "return",
				ordered.FromPairs("fun", "runner.jobs.list_jobs", "jid", jid, "return", answer, "success", true),
				"fun", "runner.jobs.list_jobs", "user", "root")
		}
		if err := c.SaveLoad(ctx, jid, load, nil); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		jobs, err := c.GetJIDs(ctx)
		if err != nil || len(jobs) != 10000 {
			b.Fatalf("%d jobs, %v", len(jobs), err)
		}
	}
}
