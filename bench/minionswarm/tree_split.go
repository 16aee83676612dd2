package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/brinesalt/brine/bench/internal/swarm"
)

// The syndic tree in separate processes (-syndics K -split): the top
// master, each lower master and each tier's swarm (its salt-syndic and
// its n/K minions) are child processes. A process may hold at most
// RLIMIT_NOFILE descriptors (20,000 on the bench machine, and raising
// the hard limit needs CAP_SYS_RESOURCE, which it lacks): each minion
// holds two connections, so 5,000 minions are 10,000 descriptors on the
// minion side and 10,000 on the master's, and 20,000 minions fit only
// spread over processes. It also gives every master its own CPU and RSS
// figures: the top's against the lower masters', which each serve
// their minions as a master serves direct minions.

// tierOpts tell a -serve-tier child which part of the swarm it runs:
// the minions j ≡ tier (mod tiers) of 0…n-1, and with hot empty the
// tier's syndic on its lower master; with hot set (the hot
// multi-master swarm, hot.go) no syndic, and each minion signs in to
// every master hot lists.
type tierOpts struct {
	dir                 string
	tier, tiers, n      int
	lowerPub, lowerRet  int
	topRet              int
	hot                 string // comma-separated host:ret-port of each master
	workers, ramp, keys int
	gate                int
	keydir              string
}

func (t tierOpts) args() []string {
	return []string{"-serve-tier", t.dir, "-tier", strconv.Itoa(t.tier), "-syndics", strconv.Itoa(t.tiers),
		"-n", strconv.Itoa(t.n), "-pub", strconv.Itoa(t.lowerPub), "-ret", strconv.Itoa(t.lowerRet),
		"-top-ret", strconv.Itoa(t.topRet), "-workers", strconv.Itoa(t.workers), "-ramp", strconv.Itoa(t.ramp),
		"-keys", strconv.Itoa(t.keys), "-keydir", t.keydir, "-start-gate", strconv.Itoa(t.gate), "-hot-masters", t.hot}
}

// serveTier is the child side: syndic t.tier on its lower master and
// the minions j ≡ t.tier (mod t.tiers) of 0…n-1, until interrupted;
// every 20 s it reports the minions' warnings on stderr.
func serveTier(t tierOpts) error {
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
	defer cancel()
	// The syndics' keys follow the minions'.
	nk := t.n
	if t.hot == "" {
		nk += t.tiers
	}
	ks, err := swarm.Cycled(t.keydir, nk, t.keys)
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	lo := masterOptions(filepath.Join(t.dir, fmt.Sprintf("lower%d", t.tier)), t.lowerPub, t.lowerRet, t.workers)
	if t.hot == "" {
		to := masterOptions(filepath.Join(t.dir, "top"), 0, t.topRet, t.workers)
		to.SyndicWait = treeSyndicWait
		s, err := newBenchSyndic(t.dir, t.tier, lo, to, ks[t.n+t.tier])
		if err != nil {
			return err
		}
		wg.Add(1)
		go func() { defer wg.Done(); _ = s.Run(ctx) }()
	}
	logs, gate := newLogCount(), runOpts{gate: t.gate}.startGate()
	started := 0
	for j := t.tier; j < t.n && ctx.Err() == nil; j += t.tiers {
		var err error
		if t.hot == "" {
			err = startSwarmMinion(ctx, &wg, t.dir, j, lo, ks[j], logs, gate)
		} else {
			err = runSwarmMinion(ctx, &wg, swarmMinion(t.dir, j, strings.Split(t.hot, ",")), ks[j], logs, gate)
		}
		if err != nil {
			cancel()
			wg.Wait()
			return err
		}
		// The tiers share the ramp.
		if started++; t.ramp > 0 && started%max(t.ramp/t.tiers, 1) == 0 {
			time.Sleep(time.Second)
		}
	}
	tick := time.NewTicker(20 * time.Second)
	defer tick.Stop()
	for done := false; !done; {
		select {
		case <-ctx.Done():
			done = true
		case <-tick.C:
		}
		fmt.Fprintf(os.Stderr, "  tier %d minion warnings: %s\n", t.tier, logs)
	}
	wg.Wait()
	return nil
}

// tierChild is a running -serve-tier child.
type tierChild struct{ cmd *exec.Cmd }

func startTier(ctx context.Context, t tierOpts) (*tierChild, error) {
	cmd := exec.CommandContext(ctx, os.Args[0], t.args()...)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 30 * time.Second
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start tier %d: %w", t.tier, err)
	}
	return &tierChild{cmd: cmd}, nil
}

func (c *tierChild) cpu() time.Duration { return procCPU(strconv.Itoa(c.cmd.Process.Pid)) }

func (c *tierChild) stop() {
	_ = c.cmd.Process.Signal(os.Interrupt)
	_ = c.cmd.Wait()
}

// treeSplit is treeSwarm with every master and tier in its own process.
func treeSplit(n, k int, o runOpts) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The keys are made here once, so the children only load them.
	_, keyTime, dir, to, err := treeSetup(n, k, o)
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	top, err := startChild(ctx, filepath.Dir(to.PKIDir), to, o.cpuProfile, true)
	if err != nil {
		return err
	}
	defer top.stop()
	var lowers []*child
	var tiers []*tierChild
	defer func() {
		for _, t := range tiers {
			t.stop()
		}
		for _, l := range lowers {
			l.stop()
		}
	}()
	for i := range k {
		lo := masterOptions(filepath.Join(dir, fmt.Sprintf("lower%d", i)), freePort(), freePort(), o.workers)
		l, err := startChild(ctx, filepath.Dir(lo.PKIDir), lo, "", false)
		if err != nil {
			return err
		}
		lowers = append(lowers, l)
		t, err := startTier(ctx, tierOpts{dir: dir, tier: i, tiers: k, n: n, lowerPub: lo.PublishPort, lowerRet: lo.RetPort,
			topRet: to.RetPort, workers: o.workers, ramp: o.ramp, keys: o.keys, keydir: o.keydir, gate: o.gate})
		if err != nil {
			return err
		}
		tiers = append(tiers, t)
	}
	start := time.Now()
	if err := waitSplitTree(start, o.signIn, top, lowers, n, k); err != nil {
		return err
	}
	fmt.Printf("tree (processes): syndics=%d minions=%d keys=%s connect_all=%s load=%s\n", k, n, keyTime.Round(time.Millisecond),
		time.Since(start).Round(time.Millisecond), loadavg())
	time.Sleep(time.Second) // the syndics' start events, the markers
	topCPU0, lowCPU0, tierCPU0 := top.masterCPU(), sumCPU(lowers), sumTierCPU(tiers)
	returned, lasts, err := treePings(o.pings, n, func() (int, time.Duration, time.Duration, error) {
		_, got, _, first, last, err := top.pingN(ctx, n)
		return got, first, last, err
	})
	if err != nil {
		return err
	}
	per := func(d time.Duration) time.Duration {
		return (d / time.Duration(max(returned, 1))).Round(time.Microsecond)
	}
	_, topPeak := top.masterRSS()
	var lowPeaks []string
	for _, l := range lowers {
		_, p := l.masterRSS()
		lowPeaks = append(lowPeaks, strconv.FormatInt(p>>20, 10))
	}
	fmt.Printf("  median last_return=%s; cpu per return: top %s, lower masters %s (each serving %d direct minions), tiers' syndics+minions %s; peak rss: top %dMiB, lower masters %s MiB\n",
		median(lasts).Round(time.Millisecond), per(top.masterCPU()-topCPU0), per(sumCPU(lowers)-lowCPU0), n/k,
		per(sumTierCPU(tiers)-tierCPU0), topPeak>>20, strings.Join(lowPeaks, "/"))
	return nil
}

func sumCPU(cs []*child) time.Duration {
	var d time.Duration
	for _, c := range cs {
		d += c.masterCPU()
	}
	return d
}

func sumTierCPU(ts []*tierChild) time.Duration {
	var d time.Duration
	for _, t := range ts {
		d += t.cpu()
	}
	return d
}

// waitSplitTree waits until every minion is subscribed to its lower
// master and every syndic to the top (established connections on their
// publish ports), reporting progress every 10 s.
func waitSplitTree(start time.Time, limit time.Duration, top *child, lowers []*child, n, k int) error {
	ports := []int{top.pubPort}
	for _, l := range lowers {
		ports = append(ports, l.pubPort)
	}
	last := time.Now()
	for {
		est := established(ports)
		c, a := 0, 0
		for i, l := range lowers {
			c += est[i+1]
			a += l.accepted()
		}
		if c >= n && est[0] >= k {
			return nil
		}
		if time.Since(start) > limit {
			return fmt.Errorf("only %d of %d minions and %d of %d syndics connected", c, n, est[0], k)
		}
		if time.Since(last) > 10*time.Second {
			fmt.Fprintf(os.Stderr, "  %s: %d of %d minions accepted, %d connected, %d of %d syndics, load=%s\n",
				time.Since(start).Round(time.Second), a, n, c, est[0], k, loadavg())
			last = time.Now()
		}
		time.Sleep(time.Second)
	}
}

// established counts the established TCP connections to each local
// port, from one read of /proc/net/tcp.
func established(ports []int) []int {
	out := make([]int, len(ports))
	data, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return out
	}
	idx := map[string]int{}
	for i, p := range ports {
		idx[fmt.Sprintf("%04X", p)] = i
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		// sl local_address rem_address st …; 01 is ESTABLISHED.
		if len(f) <= 3 || f[3] != "01" {
			continue
		}
		_, port, ok := strings.Cut(f[1], ":")
		if i, found := idx[port]; ok && found {
			out[i]++
		}
	}
	return out
}
