package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/coregrains"
	"github.com/brinesalt/brine/state/target"
)

// benchMatch compiles expr once and matches it against n minions per run;
// a second row includes the compile, as the master does for every job.
func benchMatch(ctx context.Context, expr string, n, runs int) ([]row, error) {
	minions, err := fleet(ctx, n)
	if err != nil {
		return nil, err
	}
	m, err := target.Compile(expr, target.Compound, target.Options{})
	if err != nil {
		return nil, fmt.Errorf("compile %q: %w", expr, err)
	}
	matched := matchAll(m, minions)
	if matched == 0 || matched == n {
		return nil, fmt.Errorf("expression matched %d of %d minions; pick one that splits the fleet", matched, n)
	}
	var warm, withCompile []time.Duration
	for range runs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		start := time.Now()
		matchAll(m, minions)
		warm = append(warm, time.Since(start))
		start = time.Now()
		c, err := target.Compile(expr, target.Compound, target.Options{})
		if err != nil {
			return nil, fmt.Errorf("compile %q: %w", expr, err)
		}
		matchAll(c, minions)
		withCompile = append(withCompile, time.Since(start))
	}
	return []row{
		{name: fmt.Sprintf("compound match over %d minions (%d match)", n, matched), times: warm, target: matchTarget},
		{name: fmt.Sprintf("compile + compound match over %d minions", n), times: withCompile, target: matchTarget},
	}, nil
}

func matchAll(m target.Matcher, minions []*target.Minion) int {
	n := 0
	for _, mn := range minions {
		if m.Match(mn) {
			n++
		}
	}
	return n
}

// fleet builds n minions whose grains are this host's real grains (a full
// set, ~70 keys with nested maps) with the keys the expression looks at
// varied per minion: id, os, osmajorrelease, roles, ipv4 and env.
func fleet(ctx context.Context, n int) ([]*target.Minion, error) {
	work, err := os.MkdirTemp("", "grainsmatch-fleet-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	base, err := coregrains.Gather(ctx, coregrains.GatherOptions{Opts: minionOpts(work, false)})
	if err != nil {
		return nil, fmt.Errorf("gather grains: %w", err)
	}
	oses := []string{"Debian", "Ubuntu", "CentOS", "Alpine"}
	out := make([]*target.Minion, n)
	for i := range out {
		id := fmt.Sprintf("web%d", i)
		if i%5 == 0 {
			id = fmt.Sprintf("db%d", i)
		}
		g := base.Copy()
		g.Set("id", id)
		g.Set("os", oses[i%len(oses)])
		g.Set("osmajorrelease", 10+i%4)
		g.Set("roles", []any{"web", fmt.Sprintf("shard%d", i%16)})
		g.Set("ipv4", []any{fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255), "127.0.0.1"})
		g.Set("env", ordered.FromPairs("name", []string{"prod", "stage"}[i%2], "tier", i%3))
		out[i] = &target.Minion{ID: id, Grains: g, Pillar: ordered.FromPairs("role", []string{"web", "db"}[i%2])}
	}
	return out, nil
}
