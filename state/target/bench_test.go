package target

import (
	"fmt"
	"sync"
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
)

func benchMinions(n int) []*Minion {
	oses := []string{"Debian", "Ubuntu", "CentOS", "Alpine"}
	out := make([]*Minion, n)
	for i := range out {
		g := ordered.FromPairs(
			"id", fmt.Sprintf("web%d", i),
			"os", oses[i%len(oses)],
			"osmajorrelease", 10+i%4,
			"roles", []any{"web", fmt.Sprintf("shard%d", i%16)},
			"ipv4", []any{fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255), "127.0.0.1"},
			"env", ordered.FromPairs("name", []string{"prod", "stage"}[i%2], "tier", i%3),
		)
		p := ordered.FromPairs("role", []string{"web", "db"}[i%2])
		id := fmt.Sprintf("web%d", i)
		if i%5 == 0 {
			id = fmt.Sprintf("db%d", i)
		}
		out[i] = &Minion{ID: id, Grains: g, Pillar: p}
	}
	return out
}

// BenchmarkCompound10k matches one compiled compound expression against
// 10,000 minions per iteration.
func BenchmarkCompound10k(b *testing.B) {
	expr := "G@os:Debian and ( web* or L@db5,db10 ) and not I@role:db or ( G@env:name:prod and E@web\\d+7$ and S@10.0.0.0/16 ) or G@roles:shard1*"
	m, err := Compile(expr, Compound, Options{})
	if err != nil {
		b.Fatal(err)
	}
	minions := benchMinions(10000)
	b.ResetTimer()
	for b.Loop() {
		n := 0
		for _, mn := range minions {
			if m.Match(mn) {
				n++
			}
		}
		if n == 0 {
			b.Fatal("nothing matched")
		}
	}
}

func BenchmarkCompileCompound(b *testing.B) {
	for b.Loop() {
		if _, err := Compile("G@os:Debian and ( web* or L@db5,db10 ) and not I@role:db", Compound, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestMatcherConcurrent shares one compiled matcher between goroutines;
// run with -race.
func TestMatcherConcurrent(t *testing.T) {
	m, err := Compile("G@os:Debian and ( web* or L@db5 ) and not I@role:db or P@env:name:pro.", Compound, Options{})
	if err != nil {
		t.Fatal(err)
	}
	minions := benchMinions(400)
	want := 0
	for _, mn := range minions {
		if m.Match(mn) {
			want++
		}
	}
	var wg sync.WaitGroup
	counts := make([]int, 4)
	for g := range counts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, mn := range minions {
				if m.Match(mn) {
					counts[g]++
				}
			}
		}()
	}
	wg.Wait()
	for g, c := range counts {
		if c != want {
			t.Errorf("goroutine %d matched %d minions, want %d", g, c, want)
		}
	}
}
