package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/brinesalt/brine/bench/internal/swarm"
)

// hotSwarm measures hot multi-master: n minions, each signed in to
// every one of `masters` masters (each master a child process sharing
// the first one's key pair, as the multimaster tutorial sets them up),
// against the same n minions on a single master measured first in the
// same run. Each round pings every master alone, then all of them at
// once; the table gives the medians of publish → last return and each
// master's ratio to the single master.
func hotSwarm(n int, o runOpts, masters int) error {
	// The keys are made here once, so the children only load them.
	if _, err := swarm.Cycled(o.keydir, n, o.keys); err != nil {
		return err
	}
	// Both phases spread the minions over as many processes as the
	// hot one needs, so they differ only in the masters.
	parts := swarmParts(n, masters)
	single, _, err := hotPhase(n, o, 1, parts)
	if err != nil {
		return err
	}
	alone, together, err := hotPhase(n, o, masters, parts)
	if err != nil {
		return err
	}
	if len(single[0]) == 0 {
		return fmt.Errorf("no ping rounds")
	}
	base := median(single[0])
	fmt.Printf("\n| minions | masters | test.ping, one master (median) | each master alone (median, ratio) | all masters at once (median of the slowest, ratio) |\n|---|---|---|---|---|\n")
	line := fmt.Sprintf("| %d | %d | %s |", n, masters, base.Round(time.Millisecond))
	for i, d := range alone {
		line += fmt.Sprintf(" %c: %s (%.2f×)", 'A'+i, median(d).Round(time.Millisecond), ratio(median(d), base))
	}
	fmt.Printf("%s | %s (%.2f×) |\n", line, median(together).Round(time.Millisecond), ratio(median(together), base))
	return nil
}

func ratio(d, base time.Duration) float64 {
	if base <= 0 {
		return 0
	}
	return float64(d) / float64(base)
}

// hotPhase runs the masters and the swarm once and returns, per master,
// the last-return latencies of its rounds alone, and the slowest
// master's latency of each round with all of them pinging together.
func hotPhase(n int, o runOpts, masters, parts int) ([][]time.Duration, []time.Duration, error) {
	workdir, pings, workers, ramp := o.workdir, o.pings, o.workers, o.ramp
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir, err := os.MkdirTemp(workdir, "minionswarm-hot")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(dir)
	var bs []*child
	defer func() {
		for _, b := range bs {
			b.stop()
		}
	}()
	var list []string
	for i := range masters {
		mdir := filepath.Join(dir, "master"+strconv.Itoa(i))
		mo := masterOptions(mdir, freePort(), freePort(), workers)
		if i > 0 {
			if err := copyMasterKey(filepath.Join(dir, "master0", "pki"), mo.PKIDir); err != nil {
				return nil, nil, err
			}
		}
		b, err := startChild(ctx, mdir, mo, "", false)
		if err != nil {
			return nil, nil, err
		}
		bs = append(bs, b)
		list = append(list, "127.0.0.1:"+strconv.Itoa(mo.RetPort))
	}
	// The minions run in child processes (-serve-tier with -hot-masters),
	// each holding at most maxSwarmFDs descriptors: a minion holds two
	// connections per master.
	start := time.Now()
	var ts []*tierChild
	defer func() {
		for _, t := range ts {
			t.stop()
		}
	}()
	for p := range parts {
		t, err := startTier(ctx, tierOpts{dir: dir, tier: p, tiers: parts, n: n, hot: strings.Join(list, ","),
			workers: workers, ramp: ramp, keys: o.keys, keydir: o.keydir, gate: o.gate})
		if err != nil {
			return nil, nil, err
		}
		ts = append(ts, t)
	}
	fmt.Printf("masters=%d minions=%d swarm processes=%d\n", masters, n, parts)
	lastReport := time.Now()
	for {
		done := true
		var counts []string
		for _, b := range bs {
			done = done && b.connected() >= n
			counts = append(counts, fmt.Sprintf("%d accepted/%d connected", b.accepted(), b.connected()))
		}
		if done {
			break
		}
		if time.Since(start) > o.signIn {
			return nil, nil, fmt.Errorf("%d masters: not every minion connected: %v (load %s)", masters, counts, loadavg())
		}
		if time.Since(lastReport) > 10*time.Second {
			fmt.Fprintf(os.Stderr, "  %s: %v load=%s\n", time.Since(start).Round(time.Second), counts, loadavg())
			lastReport = time.Now()
		}
		time.Sleep(200 * time.Millisecond)
	}
	fmt.Printf("masters=%d minions=%d connect_all=%s load=%s\n", masters, n, time.Since(start).Round(time.Millisecond), loadavg())
	alone := make([][]time.Duration, masters)
	var together []time.Duration
	// The CPU the swarm's processes and the masters spent on each
	// publication: the swarm's is the floor of what the minions' crypto
	// costs on the cores the masters share.
	cpu0 := func() func() string {
		s, m := sumTierCPU(ts), sumCPU(bs)
		return func() string {
			return fmt.Sprintf("cpu: swarm=%s masters=%s", (sumTierCPU(ts) - s).Round(time.Millisecond), (sumCPU(bs) - m).Round(time.Millisecond))
		}
	}
	for r := range pings {
		for i, b := range bs {
			spent := cpu0()
			_, got, expected, _, last, err := b.ping(ctx)
			if err != nil {
				return nil, nil, err
			}
			fmt.Printf("  round %d master %c alone: returned=%d/%d last_return=%s %s\n", r+1, 'A'+i, got, expected, last.Round(time.Microsecond), spent())
			alone[i] = append(alone[i], last)
		}
		if masters < 2 {
			continue
		}
		lasts := make([]time.Duration, masters)
		errs := make([]error, masters)
		var pw sync.WaitGroup
		spent := cpu0()
		for i, b := range bs {
			pw.Add(1)
			go func() {
				defer pw.Done()
				_, got, expected, _, last, err := b.ping(ctx)
				if err == nil && got < expected {
					err = fmt.Errorf("master %c: %d of %d returned", 'A'+i, got, expected)
				}
				lasts[i], errs[i] = last, err
			}()
		}
		pw.Wait()
		for _, err := range errs {
			if err != nil {
				return nil, nil, err
			}
		}
		fmt.Printf("  round %d all masters at once: last_return=%v %s\n", r+1, lasts, spent())
		together = append(together, slices.Max(lasts))
	}
	for i, b := range bs {
		rss, peak := b.masterRSS()
		fmt.Printf("  master %c rss=%dMiB peak_rss=%dMiB\n", 'A'+i, rss>>20, peak>>20)
	}
	return alone, together, nil
}

// maxSwarmFDs is how many minion connections one swarm process may
// hold: the bench machine's hard RLIMIT_NOFILE is 20,000, and a process
// also holds its log, key and /proc files.
const maxSwarmFDs = 15000

// swarmParts is how many processes n minions of `masters` masters need,
// two connections a master each.
func swarmParts(n, masters int) int {
	return max(1, (n*masters*2+maxSwarmFDs-1)/maxSwarmFDs)
}

// copyMasterKey gives another master the first one's key pair.
func copyMasterKey(from, to string) error {
	if err := os.MkdirAll(to, 0o700); err != nil {
		return err
	}
	for _, f := range []string{"master.pem", "master.pub"} {
		b, err := os.ReadFile(filepath.Join(from, f))
		if err != nil {
			return fmt.Errorf("share master key: %w", err)
		}
		if err := os.WriteFile(filepath.Join(to, f), b, 0o600); err != nil {
			return fmt.Errorf("share master key: %w", err)
		}
	}
	return nil
}
