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

// treeSyndicWait is the top master's syndic_wait in the tree.
const treeSyndicWait = 5 * time.Second

// treeSwarm is the swarm under a syndic tree: a top master
// (order_masters), k lower masters each with a salt-syndic (package
// syndic) under the top, and n swarm minions spread evenly over the
// lower masters, all in this process (-split: each in its own,
// tree_split.go). It times test.ping published on the top until all n
// returns are on the top's bus; everything shares this process, so its
// CPU per return and peak RSS are upper bounds for the top.
func treeSwarm(n, k int, o runOpts) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ks, keyTime, dir, to, err := treeSetup(n, k, o)
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	b, err := startInProcess(ctx, to)
	if err != nil {
		return err
	}
	top := &inProcessTop{b}
	defer top.stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	var lowers []*inProcess
	for i := range k {
		lo := masterOptions(filepath.Join(dir, fmt.Sprintf("lower%d", i)), freePort(), freePort(), o.workers)
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
	}
	start := time.Now()
	logs, gate := newLogCount(), o.startGate()
	// Minion j goes to lower master j mod k, started at o.ramp a second.
	for j := range n {
		if err := startSwarmMinion(ctx, &wg, dir, j, lowers[j%k].mo, ks[j], logs, gate); err != nil {
			return err
		}
		if o.ramp > 0 && j%o.ramp == o.ramp-1 {
			time.Sleep(time.Second)
		}
	}
	if err := waitTree(start, o.signIn, lowers, top, n, k, logs); err != nil {
		return err
	}
	fmt.Printf("tree: syndics=%d minions=%d keys=%s connect_all=%s load=%s\n", k, n, keyTime.Round(time.Millisecond),
		time.Since(start).Round(time.Millisecond), loadavg())
	time.Sleep(time.Second) // the syndics' start events, the markers
	cpu0 := top.masterCPU()
	returned, lasts, err := treePings(o.pings, n, func() (int, time.Duration, time.Duration, error) { return top.treePing(ctx, n) })
	if err != nil {
		return err
	}
	cpu := top.masterCPU() - cpu0
	_, peak := top.masterRSS()
	fmt.Printf("  top cpu per return=%s (%s) top peak_rss=%dMiB median last_return=%s\n",
		(cpu / time.Duration(max(returned, 1))).Round(time.Microsecond), top.cpuScope(), peak>>20, median(lasts).Round(time.Millisecond))
	return nil
}

// waitTree waits until every minion is subscribed to its lower master
// and every syndic to the top, reporting progress every 10 s.
func waitTree(start time.Time, limit time.Duration, lowers []*inProcess, top *inProcessTop, n, k int, logs *logCount) error {
	last := time.Now()
	for {
		c, a := 0, 0
		for _, l := range lowers {
			c += l.connected()
			a += l.accepted()
		}
		if c >= n && top.connected() >= k {
			return nil
		}
		if time.Since(start) > limit {
			return fmt.Errorf("only %d of %d minions and %d of %d syndics connected (minion warnings: %s)", c, n, top.connected(), k, logs)
		}
		if time.Since(last) > 10*time.Second {
			fmt.Fprintf(os.Stderr, "  %s: %d of %d minions accepted, %d connected, %d of %d syndics, load=%s, minion warnings: %s\n",
				time.Since(start).Round(time.Second), a, n, c, top.connected(), k, loadavg(), logs)
			last = time.Now()
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// treeSetup loads (or makes) the tree's keys, the n minions' and then
// the k syndics', and makes its directory and the top's options.
func treeSetup(n, k int, o runOpts) (ks []*rsa.PrivateKey, keyTime time.Duration, dir string, to master.Options, err error) {
	t0 := time.Now()
	if ks, err = swarm.Cycled(o.keydir, n+k, o.keys); err != nil {
		return nil, 0, "", to, err
	}
	keyTime = time.Since(t0)
	if dir, err = os.MkdirTemp(o.workdir, "minionswarm-tree"); err != nil {
		return nil, 0, "", to, err
	}
	to = masterOptions(filepath.Join(dir, "top"), freePort(), freePort(), o.workers)
	to.OrderMasters, to.SyndicWait = true, treeSyndicWait
	return ks, keyTime, dir, to, nil
}

// treePings runs ping rounds of test.ping on a tree's top, each
// expecting n returns, printing each; it returns the returns counted
// and each round's last-return latency.
func treePings(rounds, n int, ping func() (got int, first, last time.Duration, err error)) (int, []time.Duration, error) {
	returned := 0
	var lasts []time.Duration
	for r := range rounds {
		got, first, last, err := ping()
		if err != nil {
			return 0, nil, err
		}
		returned += got
		lasts = append(lasts, last)
		fmt.Printf("  ping %d: expected=%d returned=%d first_return=%s last_return=%s load=%s\n", r+1, n, got,
			first.Round(time.Microsecond), last.Round(time.Microsecond), loadavg())
	}
	return returned, lasts, nil
}

type inProcessTop struct{ *inProcess }

// treePing publishes test.ping on the top and counts the returns the
// syndics relay until all n are in or two minutes pass.
func (t *inProcessTop) treePing(ctx context.Context, n int) (int, time.Duration, time.Duration, error) {
	ch, unsub := t.m.Bus().Subscribe()
	defer unsub()
	t0 := time.Now()
	jid, _, err := t.m.Publish(ctx, master.PublishRequest{Tgt: "*", TgtType: "glob", Fun: "test.ping"})
	if err != nil {
		return 0, 0, 0, err
	}
	got, _, first, last, err := collect(ctx, ch, jid, n, t0)
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

// swarmMinion is swarm minion j's config: its masters and how long a
// sign-in may wait.
func swarmMinion(dir string, j int, masters []string) *config.Minion {
	c := config.DefaultMinion(dir)
	c.ID, c.Masters = fmt.Sprintf("swarm-%05d", j), masters
	c.PKIDir, c.CacheDir = dir+"/minion", dir+"/minion-cache"
	c.AcceptanceWaitTime, c.AuthTimeout = time.Second, time.Second
	// A sign-in waits auth_tries × auth_timeout: 60 s, as long as a
	// busy master may take to answer thousands at once.
	c.AuthTries = 60
	return c
}

// startSwarmMinion starts swarm minion j on master mo, as swarm does.
func startSwarmMinion(ctx context.Context, wg *sync.WaitGroup, dir string, j int, mo master.Options, k *rsa.PrivateKey, logs *logCount, gate chan struct{}) error {
	c := swarmMinion(dir, j, []string{"127.0.0.1"})
	c.MasterPort, c.PublishPort = mo.RetPort, mo.PublishPort
	return runSwarmMinion(ctx, wg, c, k, logs, gate)
}

// runSwarmMinion runs a swarm minion of config c until ctx ends: a hot
// one (minion.NewHot, one per-master minion each) when c lists several
// masters.
func runSwarmMinion(ctx context.Context, wg *sync.WaitGroup, c *config.Minion, k *rsa.PrivateKey, logs *logCount, gate chan struct{}) error {
	grains := ordered.FromPairs("id", c.ID, "os", "Debian", "kernel", "Linux")
	o := minion.Options{Config: c, Key: k, PubPEM: string(crypt.EncodePublicKey(&k.PublicKey)), NoDisk: true,
		Log: slog.New(logs), StartGate: gate, Grains: func(context.Context) (*ordered.Map, error) { return grains.Copy(), nil }}
	run := func(context.Context) error { return nil }
	if minion.IsHot(c) {
		h, err := minion.NewHot(o)
		if err != nil {
			return err
		}
		run = h.Run
	} else {
		mn, err := minion.New(o)
		if err != nil {
			return err
		}
		run = mn.Run
	}
	wg.Add(1)
	go func() { defer wg.Done(); _ = run(ctx) }()
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
