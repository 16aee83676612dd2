package main

import (
	"context"
	"crypto/rsa"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/brinesalt/brine/bench/internal/swarm"
	"github.com/brinesalt/brine/internal/config"
	"github.com/brinesalt/brine/internal/crypt"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/master"
	"github.com/brinesalt/brine/minion"
	"github.com/brinesalt/brine/syndic"
)

// treeSwarm is the swarm under a syndic tree, all in this process: a
// top master (order_masters), k lower masters each with a salt-syndic
// (package syndic) under the top, and n swarm minions spread evenly over
// the lower masters. It times test.ping published on the top until all
// n returns are on the top's bus, and the process's CPU per return over
// the rounds. The masters, syndics and minions share the process, so
// its RSS and CPU are upper bounds for the top alone.
func treeSwarm(n, k int, keydir, workdir string, pings, workers int) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ks, err := swarm.Keys(keydir, n+k)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp(workdir, "minionswarm-tree")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	to := masterOptions(filepath.Join(dir, "top"), freePort(), freePort(), workers)
	to.OrderMasters, to.SyndicWait = true, 5*time.Second
	top, err := startInProcess(ctx, to)
	if err != nil {
		return err
	}
	defer top.stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	var lowers []*inProcess
	for i := range k {
		lo := masterOptions(filepath.Join(dir, fmt.Sprintf("lower%d", i)), freePort(), freePort(), workers)
		l, err := startInProcess(ctx, lo)
		if err != nil {
			return err
		}
		defer l.stop()
		lowers = append(lowers, l)
		s, err := newBenchSyndic(dir, i, lo, to, ks[n+i])
		if err != nil {
			return err
		}
		wg.Add(1)
		go func() { defer wg.Done(); _ = s.Run(ctx) }()
		for j := i; j < n; j += k {
			if err := startSwarmMinion(ctx, &wg, dir, j, lo, ks[j]); err != nil {
				return err
			}
		}
	}
	start := time.Now()
	for {
		c := 0
		for _, l := range lowers {
			c += l.connected()
		}
		if c >= n && top.connected() >= k {
			break
		}
		if time.Since(start) > 15*time.Minute {
			return fmt.Errorf("only %d of %d minions and %d of %d syndics connected", c, n, top.connected(), k)
		}
		time.Sleep(100 * time.Millisecond)
	}
	fmt.Printf("tree: syndics=%d minions=%d connect_all=%s load=%s\n", k, n, time.Since(start).Round(time.Millisecond), loadavg())
	time.Sleep(time.Second) // the syndics' start events, the markers
	cpu0 := cpuTime()
	for r := range pings {
		got, first, last, err := treePing(ctx, top.m, n)
		if err != nil {
			return err
		}
		fmt.Printf("  ping %d: expected=%d returned=%d first_return=%s last_return=%s\n", r+1, n, got,
			first.Round(time.Microsecond), last.Round(time.Microsecond))
	}
	cpu := cpuTime() - cpu0
	_, peak := top.masterRSS()
	fmt.Printf("  process cpu per return=%s (all masters, syndics and minions) peak_rss=%dMiB\n",
		(cpu / time.Duration(max(pings*n, 1))).Round(time.Microsecond), peak>>20)
	return nil
}

// treePing publishes test.ping on the top and counts the returns the
// syndics relay until all n are in or two minutes pass.
func treePing(ctx context.Context, m *master.Master, n int) (got int, first, last time.Duration, err error) {
	ch, unsub := m.Bus().Subscribe()
	defer unsub()
	t0 := time.Now()
	jid, _, err := m.Publish(ctx, master.PublishRequest{Tgt: "*", TgtType: "glob", Fun: "test.ping"})
	if err != nil {
		return 0, 0, 0, err
	}
	got, _, first, last, err = collect(ctx, ch, jid, n, t0)
	return got, first, last, err
}

// newBenchSyndic is syndic i on lower master lo under the top, its
// key written into its pki_dir as minion.pem.
func newBenchSyndic(dir string, i int, lo, top master.Options, k *rsa.PrivateKey) (*syndic.Syndic, error) {
	sd := filepath.Join(dir, fmt.Sprintf("syndic%d", i))
	pki := filepath.Join(sd, "pki")
	if err := os.MkdirAll(pki, 0o700); err != nil {
		return nil, err
	}
	if err := crypt.WriteFileAtomic(filepath.Join(pki, "minion.pem"), crypt.EncodePrivateKey(k), 0o600); err != nil {
		return nil, err
	}
	if err := crypt.WriteFileAtomic(filepath.Join(pki, "minion.pub"), crypt.EncodePublicKey(&k.PublicKey), 0o644); err != nil {
		return nil, err
	}
	mc := config.DefaultMinion(sd)
	mc.ID, mc.PKIDir, mc.CacheDir = fmt.Sprintf("syndic%d", i), pki, filepath.Join(sd, "cache")
	mc.Masters, mc.MasterPort = []string{fmt.Sprintf("127.0.0.1:%d", top.RetPort)}, top.RetPort
	mc.AcceptanceWaitTime, mc.AuthTimeout = time.Second, time.Second
	c := &syndic.Config{ID: mc.ID, Uppers: mc.Masters, Minion: mc, Local: lo, Wait: top.SyndicWait,
		EventForwardTimeout: 500 * time.Millisecond, JIDForwardCacheHWM: 100, Failover: "random", Mode: "sync",
		Retries: 3, JobCache: "local_cache"}
	return syndic.New(c, slog.New(slog.DiscardHandler))
}

// startSwarmMinion starts swarm minion j on master mo, as swarm does.
func startSwarmMinion(ctx context.Context, wg *sync.WaitGroup, dir string, j int, mo master.Options, k *rsa.PrivateKey) error {
	id := fmt.Sprintf("swarm-%05d", j)
	c := config.DefaultMinion(dir)
	c.ID, c.Masters, c.MasterPort, c.PublishPort = id, []string{"127.0.0.1"}, mo.RetPort, mo.PublishPort
	c.PKIDir, c.CacheDir = dir+"/minion", dir+"/minion-cache"
	c.AcceptanceWaitTime, c.AuthTimeout = time.Second, time.Second
	grains := ordered.FromPairs("id", id, "os", "Debian", "kernel", "Linux")
	mn, err := minion.New(minion.Options{Config: c, Key: k, PubPEM: string(crypt.EncodePublicKey(&k.PublicKey)), NoDisk: true,
		Grains: func(context.Context) (*ordered.Map, error) { return grains.Copy(), nil }})
	if err != nil {
		return err
	}
	wg.Add(1)
	go func() { defer wg.Done(); _ = mn.Run(ctx) }()
	return nil
}

// cpuTime is this process's user+system CPU so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
