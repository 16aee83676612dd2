package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/coregrains"
)

// minionOpts are the options salt-call passes to Gather, with the config
// directory in work so no grains file of this machine is read; cached
// adds grains_cache with a cachedir, as salt-ssh sets for its targets.
func minionOpts(work string, cached bool) *ordered.Map {
	opts := ordered.FromPairs("id", "bench", "config_dir", work, "conf_file", filepath.Join(work, "minion"))
	if cached {
		opts.Set("grains_cache", true)
		opts.Set("cachedir", filepath.Join(work, "cache"))
	}
	return opts
}

// benchGather times Gather cold (every core grain read from /proc, /sys,
// /etc and the network stack, fqdns and GPU grains on as by default),
// cold without the fqdns reverse lookups (bounded by a timeout, they
// dominate on a host with addresses that have no PTR record), and from
// a fresh grains_cache.
func benchGather(ctx context.Context, work string, coldRuns, cachedRuns int) ([]row, error) {
	cold, err := timeGather(ctx, coregrains.GatherOptions{Opts: minionOpts(work, false)}, coldRuns)
	if err != nil {
		return nil, err
	}
	noFQDNs := minionOpts(work, false)
	noFQDNs.Set("enable_fqdns_grains", false)
	coldNoDNS, err := timeGather(ctx, coregrains.GatherOptions{Opts: noFQDNs}, coldRuns)
	if err != nil {
		return nil, err
	}
	cachedOpts := coregrains.GatherOptions{Opts: minionOpts(work, true)}
	// The first call writes the cache; the timed calls read it.
	if _, err := coregrains.Gather(ctx, cachedOpts); err != nil {
		return nil, fmt.Errorf("gather grains: %w", err)
	}
	cached, err := timeGather(ctx, cachedOpts, cachedRuns)
	if err != nil {
		return nil, err
	}
	return []row{
		{name: "coregrains.Gather, cold (fqdns on, the default)", times: cold},
		{name: "coregrains.Gather, cold, enable_fqdns_grains: False", times: coldNoDNS},
		{name: "coregrains.Gather, grains_cache hit", times: cached},
	}, nil
}

func timeGather(ctx context.Context, opts coregrains.GatherOptions, runs int) ([]time.Duration, error) {
	times := make([]time.Duration, 0, runs)
	for range runs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		start := time.Now()
		g, err := coregrains.Gather(ctx, opts)
		times = append(times, time.Since(start))
		if err != nil {
			return nil, fmt.Errorf("gather grains: %w", err)
		}
		if g.Len() == 0 {
			return nil, fmt.Errorf("gather grains: no grains")
		}
	}
	return times, nil
}
