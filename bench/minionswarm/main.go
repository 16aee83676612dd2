// Command minionswarm measures one master against many minions: it runs
// a Brine master on loopback and N minion instances in this process,
// each with its own RSA key, session and ZeroMQ sockets, then times
// `test.ping` from publish to the last return.
//
//	go run ./bench/minionswarm -n 100,1000
//
// Keys are generated once into -keydir and reused, since generating
// thousands of 2048-bit keys dominates a cold run.
package main

import (
	"context"
	"crypto/rsa"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/brinesalt/brine/internal/config"
	"github.com/brinesalt/brine/internal/crypt"
	"github.com/brinesalt/brine/master"
	"github.com/brinesalt/brine/minion"
	_ "github.com/brinesalt/brine/state/modules/test"
	"github.com/brinesalt/brine/state/ordered"
)

func main() {
	ns := flag.String("n", "100,1000", "comma-separated swarm sizes")
	keydir := flag.String("keydir", filepath.Join(os.TempDir(), "minionswarm-keys"), "where minion keys are kept between runs")
	pings := flag.Int("pings", 3, "test.ping rounds per size")
	workers := flag.Int("workers", 5, "master worker_threads")
	ramp := flag.Int("ramp", 0, "start at most this many minions per second (0: all at once)")
	flag.Parse()
	raiseNoFile()
	for _, f := range strings.Split(*ns, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		if err := swarm(n, *keydir, *pings, *workers, *ramp); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}

func raiseNoFile() {
	var rl syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl) == nil && rl.Cur < 200000 {
		rl.Cur, rl.Max = max(rl.Max, 200000), max(rl.Max, 200000)
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl)
	}
}

func keys(dir string, n int) ([]*rsa.PrivateKey, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	out := make([]*rsa.PrivateKey, n)
	var wg sync.WaitGroup
	var firstErr atomic.Value
	sem := make(chan struct{}, runtime.NumCPU())
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			path := filepath.Join(dir, fmt.Sprintf("m%05d.pem", i))
			if k, err := crypt.LoadPrivateKey(path, ""); err == nil {
				out[i] = k
				return
			}
			k, err := crypt.GenerateKey(2048)
			if err != nil {
				firstErr.Store(err)
				return
			}
			_ = crypt.WriteFileAtomic(path, crypt.EncodePrivateKey(k), 0o600)
			out[i] = k
		}()
	}
	wg.Wait()
	if err, ok := firstErr.Load().(error); ok {
		return nil, err
	}
	return out, nil
}

func swarm(n int, keydir string, pings, workers, ramp int) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	t0 := time.Now()
	ks, err := keys(keydir, n)
	if err != nil {
		return err
	}
	keyTime := time.Since(t0)
	dir, err := os.MkdirTemp("", "minionswarm")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	mo := master.DefaultOptions()
	mo.Interface, mo.PublishPort, mo.RetPort, mo.WorkerThreads = "127.0.0.1", freePort(), freePort(), workers
	mo.PKIDir, mo.CacheDir, mo.SockDir = dir+"/pki", dir+"/cache", dir+"/sock"
	mo.FileRoots, mo.PillarRoots = map[string][]string{"base": {dir + "/srv"}}, map[string][]string{"base": {dir + "/pillar"}}
	mo.Auth.AutoAccept = true
	mo.Timeout = 60 * time.Second
	m, err := master.New(mo, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	if err := m.Start(ctx); err != nil {
		return err
	}
	defer m.Stop()

	start := time.Now()
	var wg sync.WaitGroup
	for i := range n {
		id := fmt.Sprintf("swarm-%05d", i)
		c := config.DefaultMinion(dir)
		c.ID, c.Masters, c.MasterPort, c.PublishPort = id, []string{"127.0.0.1"}, mo.RetPort, mo.PublishPort
		c.PKIDir, c.CacheDir = dir+"/minion", dir+"/minion-cache"
		c.AcceptanceWaitTime, c.AuthTimeout = time.Second, time.Second
		grains := ordered.FromPairs("id", id, "os", "Debian", "kernel", "Linux")
		mn, err := minion.New(minion.Options{Config: c, Key: ks[i], PubPEM: string(crypt.EncodePublicKey(&ks[i].PublicKey)), NoDisk: true,
			Grains: func(context.Context) (*ordered.Map, error) { return grains.Copy(), nil }})
		if err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = mn.Run(ctx)
		}()
		if ramp > 0 && i%ramp == ramp-1 {
			time.Sleep(time.Second)
		}
	}
	lastReport := time.Now()
	for m.Subscribers() < n {
		if time.Since(start) > 15*time.Minute {
			if f, err := os.Create(filepath.Join(os.TempDir(), "minionswarm-goroutines.txt")); err == nil {
				_ = pprof.Lookup("goroutine").WriteTo(f, 1)
				f.Close()
			}
			return fmt.Errorf("only %d of %d minions connected", m.Subscribers(), n)
		}
		if time.Since(lastReport) > 10*time.Second {
			fmt.Fprintf(os.Stderr, "  %s: %d of %d minions connected\n", time.Since(start).Round(time.Second), m.Subscribers(), n)
			lastReport = time.Now()
		}
		time.Sleep(20 * time.Millisecond)
	}
	connect := time.Since(start)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Printf("minions=%d keys=%s connect_all=%s goroutines=%d heap=%dMiB\n", n, keyTime.Round(time.Millisecond),
		connect.Round(time.Millisecond), runtime.NumGoroutine(), ms.HeapAlloc>>20)
	for r := range pings {
		got, expected, first, last, err := ping(ctx, m, n)
		if err != nil {
			return err
		}
		fmt.Printf("  ping %d: expected=%d returned=%d first_return=%s last_return=%s\n", r+1, expected, got,
			first.Round(time.Microsecond), last.Round(time.Microsecond))
	}
	cancel()
	m.Stop()
	wg.Wait()
	return nil
}

// ping publishes test.ping to every minion and times the first and the
// last return from the moment of publishing.
func ping(ctx context.Context, m *master.Master, n int) (got, expected int, first, last time.Duration, err error) {
	ch, unsub := m.Bus().Subscribe()
	defer unsub()
	t0 := time.Now()
	jid, minions, err := m.Publish(master.PublishRequest{Tgt: "*", TgtType: "glob", Fun: "test.ping"})
	if err != nil {
		return 0, 0, 0, 0, err
	}
	prefix := "salt/job/" + jid + "/ret/"
	timeout := time.After(2 * time.Minute)
	for got < len(minions) {
		select {
		case ev := <-ch:
			if strings.HasPrefix(ev.Tag, prefix) {
				got++
				d := time.Since(t0)
				if got == 1 {
					first = d
				}
				last = d
			}
		case <-timeout:
			return got, len(minions), first, last, nil
		case <-ctx.Done():
			return got, len(minions), first, last, ctx.Err()
		}
	}
	return got, len(minions), first, last, nil
}

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
