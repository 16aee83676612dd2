// Command reactorbench measures Brine's reactor (internal/reactor) in a
// real master with a real minion connected over loopback ZeroMQ, all in
// this process:
//
//   - throughput: events fired on the master bus whose reaction SLS is
//     rendered (Jinja, YAML), compiled and run as a local reaction (a
//     signed, encrypted publication and its job cache entry), with the
//     pool at 1, 4 and 10 workers (reactor_worker_threads) and a queue
//     that holds every event; reactions per second, median of rounds;
//
//   - storm: 10,000 matching events fired within one second with
//     reactor_worker_hwm 10000 and 1000, while test.ping is published to
//     the minion every 100 ms: how many events the reactor kept and ran
//     and how many it dropped (counted, as promised), and whether and how
//     fast test.ping kept answering.
//
//     go run ./bench/reactorbench -events 2000 -rounds 3
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/config"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/reactor"
	"github.com/brinesalt/brine/master"
	"github.com/brinesalt/brine/minion"
	_ "github.com/brinesalt/brine/state/modules/allmodules"
)

func main() { os.Exit(run()) }

func run() int {
	events := flag.Int("events", 2000, "events per throughput round")
	rounds := flag.Int("rounds", 3, "throughput rounds per pool size")
	poolsFlag := flag.String("pools", "1,4,10", "reactor_worker_threads to measure")
	storm := flag.Int("storm", 10000, "events of the storm, fired within one second")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the throughput rounds here")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	var pools []int
	for _, s := range strings.Split(*poolsFlag, ",") {
		var n int
		if _, err := fmt.Sscan(s, &n); err != nil || n <= 0 {
			fmt.Fprintln(os.Stderr, "bad -pools:", s)
			return 2
		}
		pools = append(pools, n)
	}
	fmt.Println("| reactor_worker_threads | events | median time | reactions/s | × 1 worker |")
	fmt.Println("|---|---|---|---|---|")
	// Rounds alternate between the pool sizes, so load from elsewhere on
	// the machine falls on all of them.
	rates := make([][]float64, len(pools))
	times := make([][]time.Duration, len(pools))
	for range *rounds {
		for i, w := range pools {
			d, err := throughput(w, *events)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			times[i] = append(times[i], d)
			rates[i] = append(rates[i], float64(*events)/d.Seconds())
		}
	}
	var base float64
	for i, w := range pools {
		slices.Sort(rates[i])
		slices.Sort(times[i])
		rate := rates[i][len(rates[i])/2]
		if base == 0 {
			base = rate
		}
		fmt.Printf("| %d | %d | %s | %.0f | %.2f |\n", w, *events, times[i][len(times[i])/2].Round(time.Millisecond), rate, rate/base)
	}
	fmt.Println()
	fmt.Println("| reactor_worker_hwm | fired | in | matched | kept and run | dropped | pings answered | slowest ping | drained after |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	for _, hwm := range []int{10000, 1000} {
		if err := stormRound(hwm, *storm); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return 0
}

// env is a master with a reactor and one minion.
type env struct {
	m      *master.Master
	cancel context.CancelFunc
	done   chan struct{}
	ctx    context.Context
}

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func start(workers, hwm int) (*env, error) {
	dir, err := os.MkdirTemp("", "reactorbench-")
	if err != nil {
		return nil, err
	}
	sls := filepath.Join(dir, "react.sls")
	src := "ping_{{ data['n'] }}:\n  local.test.ping:\n    - tgt: nobody-{{ data['n'] }}\n    - tgt_type: list\n"
	if err := os.WriteFile(sls, []byte(src), 0o600); err != nil {
		return nil, err
	}
	mo := master.DefaultOptions()
	mo.Interface, mo.PublishPort, mo.RetPort = "127.0.0.1", freePort(), freePort()
	mo.PKIDir, mo.CacheDir, mo.SockDir = dir+"/pki", dir+"/cache", dir+"/sock"
	mo.Auth.AutoAccept = true
	// zmq_filtering: the reactions' publications to absent minions are
	// not sent to m1, so the storm loads the reactor and the master, not
	// the one minion's decryption of thousands of publications.
	mo.ZMQFiltering = true
	mo.Raw = ordered.FromPairs("reactor", []any{ordered.FromPairs("bench/*", []any{sls})},
		"reactor_worker_threads", workers, "reactor_worker_hwm", hwm)
	m, err := master.New(mo, slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := m.Start(ctx); err != nil {
		cancel()
		return nil, err
	}
	mc := config.DefaultMinion(filepath.Join(dir, "etc-m1"))
	mc.ID, mc.Masters, mc.MasterPort, mc.PublishPort = "m1", []string{"127.0.0.1"}, mo.RetPort, mo.PublishPort
	mc.PKIDir, mc.CacheDir = dir+"/pki-m1", dir+"/cache-m1"
	mc.AcceptanceWaitTime = 200 * time.Millisecond
	mc.ZMQFiltering = true
	mn, err := minion.New(minion.Options{Config: mc, Grains: func(context.Context) (*ordered.Map, error) {
		return ordered.FromPairs("id", "m1"), nil
	}})
	if err != nil {
		cancel()
		return nil, err
	}
	e := &env{m: m, cancel: cancel, done: make(chan struct{}), ctx: ctx}
	go func() {
		defer close(e.done)
		_ = mn.Run(ctx)
	}()
	t0 := time.Now()
	for m.Subscribers() < 1 {
		if time.Since(t0) > time.Minute {
			return nil, fmt.Errorf("the minion did not connect")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The first ping proves the minion answers before anything is measured.
	for {
		got, _, _ := m.Gather(ctx, master.PublishRequest{Tgt: "m1", Fun: "test.ping"}, 5*time.Second)
		if len(got) == 1 {
			break
		}
	}
	e.ctx = context.WithValue(ctx, dirKey{}, dir)
	return e, nil
}

type dirKey struct{}

func (e *env) stop() {
	e.cancel()
	<-e.done
	e.m.Stop()
	if dir, ok := e.ctx.Value(dirKey{}).(string); ok {
		os.RemoveAll(dir)
	}
}

func (e *env) waitDone(want int64, limit time.Duration) (reactor.Stats, error) {
	deadline := time.Now().Add(limit)
	for {
		st := e.m.Reactor().Stats()
		if st.Done >= want {
			return st, nil
		}
		if time.Now().After(deadline) {
			return st, fmt.Errorf("reactor did %d of %d events in %s", st.Done, want, limit)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func throughput(workers, n int) (time.Duration, error) {
	e, err := start(workers, n)
	if err != nil {
		return 0, err
	}
	defer e.stop()
	t0 := time.Now()
	for i := range n {
		e.m.Bus().Fire("bench/event", ordered.FromPairs("n", i))
	}
	st, err := e.waitDone(int64(n), 5*time.Minute)
	if err != nil {
		return 0, err
	}
	if st.Failed > 0 || st.Dropped > 0 {
		return 0, fmt.Errorf("throughput round: %+v", st)
	}
	return time.Since(t0), nil
}

func stormRound(hwm, n int) error {
	e, err := start(reactor.DefaultWorkers, hwm)
	if err != nil {
		return err
	}
	defer e.stop()
	type ping struct {
		ok bool
		d  time.Duration
	}
	pings := make(chan ping, 1000)
	stopPings := make(chan struct{})
	go func() {
		defer close(pings)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stopPings:
				return
			case <-t.C:
			}
			t0 := time.Now()
			got, _, _ := e.m.Gather(e.ctx, master.PublishRequest{Tgt: "m1", Fun: "test.ping"}, 10*time.Second)
			pings <- ping{ok: len(got) == 1, d: time.Since(t0)}
		}
	}()
	t0 := time.Now()
	per := time.Second / time.Duration(n)
	for i := range n {
		if d := time.Duration(i)*per - time.Since(t0); d > time.Millisecond {
			time.Sleep(d)
		}
		e.m.Bus().Fire("bench/storm", ordered.FromPairs("n", i))
	}
	fired := time.Since(t0)
	// Every event reaches the reactor (the bus keeps up), then the pool
	// finishes what it kept.
	for e.m.Reactor().Stats().Matched < int64(n) && time.Since(t0) < time.Minute {
		time.Sleep(5 * time.Millisecond)
	}
	st, err := e.waitDone(e.m.Reactor().Stats().Queued, 10*time.Minute)
	drained := time.Since(t0)
	close(stopPings)
	answered, total := 0, 0
	var slowest time.Duration
	for p := range pings {
		total++
		if p.ok {
			answered++
		}
		slowest = max(slowest, p.d)
	}
	if err != nil {
		return err
	}
	fmt.Printf("| %d | %d | %s | %d | %d | %d | %d/%d | %s | %s |\n", hwm, n, fired.Round(time.Millisecond), st.Matched,
		st.Done, st.Dropped, answered, total, slowest.Round(time.Millisecond), drained.Round(time.Millisecond))
	if st.Matched != int64(n) || st.Done+st.Dropped != int64(n) {
		return fmt.Errorf("storm: events unaccounted for: %+v", st)
	}
	return nil
}
