package main

import (
	"context"
	"crypto/rsa"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/brinesalt/brine/bench/internal/swarm"
	"github.com/brinesalt/brine/internal/config"
	"github.com/brinesalt/brine/internal/crypt"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/minion"
)

// hotSwarm measures hot multi-master: n minions, each signed in to
// every one of `masters` masters (each master a child process sharing
// the first one's key pair, as the multimaster tutorial sets them up),
// against the same n minions on a single master measured first in the
// same run. Each round pings every master alone, then all of them at
// once; the table gives the medians of publish → last return and each
// master's ratio to the single master.
func hotSwarm(n int, o runOpts, masters int) error {
	ks, err := swarm.Cycled(o.keydir, n, o.keys)
	if err != nil {
		return err
	}
	single, _, err := hotPhase(ks, o, 1)
	if err != nil {
		return err
	}
	alone, together, err := hotPhase(ks, o, masters)
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
func hotPhase(ks []*rsa.PrivateKey, o runOpts, masters int) ([][]time.Duration, []time.Duration, error) {
	workdir, pings, workers, ramp := o.workdir, o.pings, o.workers, o.ramp
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := len(ks)
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
	start := time.Now()
	var wg sync.WaitGroup
	logs := newLogCount()
	gate := o.startGate()
	for i := range n {
		id := fmt.Sprintf("swarm-%05d", i)
		c := config.DefaultMinion(dir)
		c.ID, c.Masters = id, list
		c.PKIDir, c.CacheDir = dir+"/minion", dir+"/minion-cache"
		c.AcceptanceWaitTime, c.AuthTimeout = time.Second, time.Second
		// A sign-in waits auth_tries × auth_timeout: 60 s, as long as a
		// busy master may take to answer thousands at once.
		c.AuthTries = 60
		grains := ordered.FromPairs("id", id, "os", "Debian", "kernel", "Linux")
		o := minion.Options{Config: c, Key: ks[i], PubPEM: string(crypt.EncodePublicKey(&ks[i].PublicKey)), NoDisk: true,
			Log: slog.New(logs), StartGate: gate, Grains: func(context.Context) (*ordered.Map, error) { return grains.Copy(), nil }}
		var run func(context.Context) error
		if minion.IsHot(c) {
			h, err := minion.NewHot(o)
			if err != nil {
				return nil, nil, err
			}
			run = h.Run
		} else {
			mn, err := minion.New(o)
			if err != nil {
				return nil, nil, err
			}
			run = mn.Run
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = run(ctx)
		}()
		if ramp > 0 && i%ramp == ramp-1 {
			time.Sleep(time.Second)
		}
	}
	defer wg.Wait()
	defer cancel()
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
			fmt.Fprintf(os.Stderr, "  %s: %v load=%s minion warnings: %s\n", time.Since(start).Round(time.Second), counts, loadavg(), logs)
			lastReport = time.Now()
		}
		time.Sleep(200 * time.Millisecond)
	}
	fmt.Printf("masters=%d minions=%d connect_all=%s load=%s\n  minion warnings: %s\n", masters, n, time.Since(start).Round(time.Millisecond), loadavg(), logs)
	alone := make([][]time.Duration, masters)
	var together []time.Duration
	for r := range pings {
		for i, b := range bs {
			_, got, expected, _, last, err := b.ping(ctx)
			if err != nil {
				return nil, nil, err
			}
			fmt.Printf("  round %d master %c alone: returned=%d/%d last_return=%s\n", r+1, 'A'+i, got, expected, last.Round(time.Microsecond))
			alone[i] = append(alone[i], last)
		}
		if masters < 2 {
			continue
		}
		lasts := make([]time.Duration, masters)
		errs := make([]error, masters)
		var pw sync.WaitGroup
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
		fmt.Printf("  round %d all masters at once: last_return=%v\n", r+1, lasts)
		together = append(together, slices.Max(lasts))
	}
	for i, b := range bs {
		rss, peak := b.masterRSS()
		fmt.Printf("  master %c rss=%dMiB peak_rss=%dMiB\n", 'A'+i, rss>>20, peak>>20)
	}
	return alone, together, nil
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
