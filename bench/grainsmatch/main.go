// Command grainsmatch measures the two halves of targeting on one
// machine: gathering this host's grains with state/grains.Gather (cold,
// and served from the grains_cache file salt-ssh targets use), and
// matching one compound expression with state/target against 10,000
// minion grain sets built from this host's real grains. It prints the
// medians of many in-process runs as a Markdown table, with each figure
// as a ratio to the target from the performance issue.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"
)

// matchTarget is the budget for one compound expression over
// 10,000 minions.
const matchTarget = 50 * time.Millisecond

// defaultExpr mixes every matcher a top file or `salt -C` typically uses:
// grains, globs, lists, pillar, PCRE on the id, subnet and a nested grain.
const defaultExpr = `G@os:Debian and ( web* or L@db5,db10 ) and not I@role:db or ( G@env:name:prod and E@web\d+7$ and S@10.0.0.0/16 ) or G@roles:shard1*`

func main() {
	gatherRuns := flag.Int("gather-runs", 50, "repetitions of a cold grains.Gather")
	cachedRuns := flag.Int("cached-runs", 500, "repetitions of a grains_cache hit")
	matchRuns := flag.Int("match-runs", 50, "repetitions of one match over all minions")
	minions := flag.Int("minions", 10000, "minion grain sets to match against")
	expr := flag.String("expr", defaultExpr, "compound expression")
	timeout := flag.Duration("timeout", 5*time.Minute, "bound on the whole run")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	if err := run(ctx, *gatherRuns, *cachedRuns, *matchRuns, *minions, *expr); err != nil {
		fmt.Fprintln(os.Stderr, "grainsmatch:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, gatherRuns, cachedRuns, matchRuns, minions int, expr string) error {
	work, err := os.MkdirTemp("", "grainsmatch-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	gather, err := benchGather(ctx, work, gatherRuns, cachedRuns)
	if err != nil {
		return err
	}
	match, err := benchMatch(ctx, expr, minions, matchRuns)
	if err != nil {
		return err
	}
	fmt.Printf("### Grains and compound matching (in process, medians)\n\n")
	fmt.Printf("Expression: `%s`\n\n", expr)
	fmt.Println("| measurement | runs | median | p90 | min | target | × target |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for _, r := range append(gather, match...) {
		r.print()
	}
	return nil
}

// row is one line of the table.
type row struct {
	name   string
	times  []time.Duration
	target time.Duration // 0: no target from the issue
}

func (r row) print() {
	s := summarize(r.times)
	target, ratio := "—", "—"
	if r.target > 0 {
		target = dur(r.target)
		ratio = fmt.Sprintf("%.3f", float64(s.median)/float64(r.target))
	}
	fmt.Printf("| %s | %d | %s | %s | %s | %s | %s |\n", r.name, len(r.times), dur(s.median), dur(s.p90), dur(s.min), target, ratio)
}
