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
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/brinesalt/brine/bench/internal/swarm"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/master"
	_ "github.com/brinesalt/brine/state/modules/test"
)

func main() { os.Exit(run()) }

func run() int {
	ns := flag.String("n", "100,1000", "comma-separated swarm sizes")
	keydir := flag.String("keydir", filepath.Join(os.TempDir(), "minionswarm-keys"), "where minion keys are kept between runs")
	pings := flag.Int("pings", 3, "test.ping rounds per size")
	workers := flag.Int("workers", 5, "master worker_threads")
	ramp := flag.Int("ramp", 0, "start at most this many minions per second (0: all at once)")
	split := flag.Bool("split", false, "run the master in a child process (each process then needs half the file descriptors)")
	serve := flag.String("serve-master", "", "internal: run only the master with this directory")
	pubPort := flag.Int("pub", 0, "internal: publish port for -serve-master")
	retPort := flag.Int("ret", 0, "internal: ret port for -serve-master")
	workdir := flag.String("workdir", "/var/tmp", "where the master's pki_dir and cachedir are made (a file system like /var's, where Salt keeps them; "+
		"on the bench machine creating files under /tmp costs about 1 ms each, 30 times /var/tmp)")
	jobCaches := flag.String("job-caches", "", "measure these master_job_cache returners instead of test.ping rounds (local_cache,pgjsonb,mysql,postgres_local_cache); "+
		"the databases are throwaway servers (internal/testsupport/dbtest)")
	listJobs := flag.Int("list-jobs", 10000, "with -job-caches: jobs in the cache when jobs.list_jobs is timed")
	masters := flag.Int("masters", 1, "hot multi-master: sign every minion in to this many masters (child processes) and compare each master's test.ping with a single master's, measured first in the same run")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the run here (with -split, the master's goes to this path + \".master\")")
	syndics := flag.Int("syndics", 0, "run the swarm under a syndic tree: this many lower masters, each with a salt-syndic under one top master, the -n minions spread over them (syndic.go)")
	compare := flag.Int("compare", 0, "with -syndics: then run this many minions directly under one master (a child process, as -split), in the same run, for the CPU-per-return comparison; "+
		"each minion holds two connections, so one master can serve at most RLIMIT_NOFILE/2 of them")
	serveTierDir := flag.String("serve-tier", "", "internal: run one tier of a -split syndic tree (its syndic and minions) in this directory")
	tier := flag.Int("tier", 0, "internal: the tier -serve-tier runs")
	topRet := flag.Int("top-ret", 0, "internal: the top master's ret port for -serve-tier")
	hotMasters := flag.String("hot-masters", "", "internal: -serve-tier runs hot multi-master minions of these masters (host:ret-port,…) and no syndic")
	distinct := flag.Int("keys", 0, "distinct minion keys, shared round-robin by the swarm (0: one per minion); making a key costs ~150 ms of CPU, signing in with a shared key costs the same")
	orderMasters := flag.Bool("order-masters", false, "internal: -serve-master with order_masters")
	signIn := flag.Duration("signin-timeout", 15*time.Minute, "give up when not every minion has signed in and subscribed by then")
	gate := flag.Int("start-gate", 16, "at most this many minions of one process starting (sign-in and first pillar) at once (minion.Options.StartGate; 0: no bound): "+
		"thousands starting together in one process starve each other into sign-in timeouts, which real minions with their own CPUs do not")
	flag.Parse()
	o := runOpts{keydir: *keydir, workdir: *workdir, pings: *pings, workers: *workers, ramp: *ramp, keys: *distinct, split: *split,
		cpuProfile: *cpuProfile, signIn: *signIn, gate: *gate}
	raiseNoFile()
	if *cpuProfile != "" {
		stop, err := startCPUProfile(*cpuProfile)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer stop()
	}
	if *serveTierDir != "" {
		n, _ := strconv.Atoi(*ns)
		t := tierOpts{dir: *serveTierDir, tier: *tier, tiers: *syndics, n: n, lowerPub: *pubPort, lowerRet: *retPort, topRet: *topRet, hot: *hotMasters,
			workers: *workers, ramp: *ramp, keys: *distinct, keydir: *keydir, gate: *gate}
		if err := serveTier(t); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	}
	if *serve != "" {
		if err := serveMaster(*serve, *pubPort, *retPort, *workers, *orderMasters); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	}
	runs := []*cacheRun{nil}
	if *jobCaches != "" {
		var stop func()
		var err error
		if runs, stop, err = startCaches(*jobCaches, *pings, *listJobs); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer stop()
		// An interrupt stops the database servers too.
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
		go func() { <-sig; stop(); os.Exit(130) }()
	}
	for _, f := range strings.Split(*ns, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		if *syndics > 0 {
			tree := treeSwarm
			if o.split {
				tree = treeSplit
			}
			if err := tree(n, *syndics, o); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			if *compare > 0 {
				o.split = true
				if err := runSwarm(*compare, o, nil); err != nil {
					fmt.Fprintln(os.Stderr, err)
					return 1
				}
			}
			continue
		}
		if *masters > 1 {
			if err := hotSwarm(n, o, *masters); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			continue
		}
		for _, jc := range runs {
			if err := runSwarm(n, o, jc); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
		}
	}
	if *jobCaches != "" {
		fmt.Println("\n| job cache | minions | all stored, after the last return (median) | first return → all stored (median) | jobs.lookup_jid (median) | jobs listed | jobs.list_jobs (median) | as many returns stored the way Salt's returner does it vs by a Brine store |")
		fmt.Println("|---|---|---|---|---|---|---|---|")
		for _, jc := range runs {
			for _, l := range jc.results {
				fmt.Println(l)
			}
		}
	}
	return 0
}

// startCPUProfile profiles this process into path until stop.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

func raiseNoFile() {
	var rl syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl) == nil && rl.Cur < 200000 {
		rl.Cur, rl.Max = max(rl.Max, 200000), max(rl.Max, 200000)
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl)
	}
}

// runOpts are the flags every swarm shape shares.
type runOpts struct {
	keydir, workdir      string
	pings, workers, ramp int
	keys                 int // distinct keys (swarm.Cycled)
	split                bool
	cpuProfile           string
	signIn               time.Duration // how long sign-in may take
	gate                 int           // minion.Options.StartGate's size, 0: none
}

// startGate is a StartGate of o.gate slots, nil for none.
func (o runOpts) startGate() chan struct{} {
	if o.gate <= 0 {
		return nil
	}
	return make(chan struct{}, o.gate)
}

func runSwarm(n int, o runOpts, jc *cacheRun) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	t0 := time.Now()
	ks, err := swarm.Cycled(o.keydir, n, o.keys)
	if err != nil {
		return err
	}
	keyTime := time.Since(t0)
	pings, workers, ramp := o.pings, o.workers, o.ramp
	dir, err := os.MkdirTemp(o.workdir, "minionswarm")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	mo := masterOptions(dir, freePort(), freePort(), workers)
	if jc != nil {
		jc.configure(&mo)
		// A child master reads the job cache settings (a password among
		// them) from a 0600 file, not its command line.
		if err := writeRaw(filepath.Join(dir, "jobcache.json"), mo.Raw); err != nil {
			return err
		}
	}
	var b backend
	if o.split {
		b, err = startChild(ctx, dir, mo, o.cpuProfile, false)
	} else {
		b, err = startInProcess(ctx, mo)
	}
	if err != nil {
		return err
	}
	defer b.stop()

	start := time.Now()
	var wg sync.WaitGroup
	logs, gate := newLogCount(), o.startGate()
	for i := range n {
		if err := startSwarmMinion(ctx, &wg, dir, i, mo, ks[i], logs, gate); err != nil {
			return err
		}
		if ramp > 0 && i%ramp == ramp-1 {
			time.Sleep(time.Second)
		}
	}
	lastReport := time.Now()
	var authAll time.Duration
	for b.connected() < n {
		if authAll == 0 && b.accepted() >= n {
			authAll = time.Since(start)
		}
		if time.Since(start) > o.signIn {
			if f, err := os.Create(filepath.Join(os.TempDir(), "minionswarm-goroutines.txt")); err == nil {
				_ = pprof.Lookup("goroutine").WriteTo(f, 1)
				f.Close()
			}
			return fmt.Errorf("only %d of %d minions connected", b.connected(), n)
		}
		if time.Since(lastReport) > 10*time.Second {
			fmt.Fprintf(os.Stderr, "  %s: %d of %d minions accepted, %d connected\n", time.Since(start).Round(time.Second), b.accepted(), n, b.connected())
			lastReport = time.Now()
		}
		time.Sleep(100 * time.Millisecond)
	}
	connect := time.Since(start)
	if authAll == 0 {
		authAll = connect
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Printf("minions=%d keys=%s auth_all=%s connect_all=%s goroutines=%d heap=%dMiB load=%s\n", n, keyTime.Round(time.Millisecond),
		authAll.Round(time.Millisecond), connect.Round(time.Millisecond), runtime.NumGoroutine(), ms.HeapAlloc>>20, loadavg())
	if jc != nil {
		if err := jc.measure(ctx, b, mo.CacheDir, n); err != nil {
			return err
		}
		pings = 0
	}
	cpu0, returned := b.masterCPU(), 0
	for r := range pings {
		_, got, expected, first, last, err := b.ping(ctx)
		if err != nil {
			return err
		}
		returned += got
		fmt.Printf("  ping %d: expected=%d returned=%d first_return=%s last_return=%s load=%s\n", r+1, expected, got,
			first.Round(time.Microsecond), last.Round(time.Microsecond), loadavg())
	}
	rss, peak := b.masterRSS()
	fmt.Printf("  master rss=%dMiB peak_rss=%dMiB", rss>>20, peak>>20)
	if returned > 0 {
		fmt.Printf(" master cpu per return=%s (%s)", ((b.masterCPU() - cpu0) / time.Duration(returned)).Round(time.Microsecond), b.cpuScope())
	}
	fmt.Println()
	cancel()
	b.stop()
	wg.Wait()
	return nil
}

// backend is the master the swarm talks to: in this process, or in a
// child process reached through its local socket.
type backend interface {
	connected() int
	// accepted counts the minions whose first _auth was accepted
	// (salt/auth events with act "accept").
	accepted() int
	// masterRSS is the master process's resident set now and at its
	// peak (VmRSS, VmHWM), in bytes; in-process, minions are included.
	masterRSS() (cur, peak int64)
	// masterCPU is the master process's user+system CPU so far;
	// in-process, minions are included (cpuScope says which).
	masterCPU() time.Duration
	cpuScope() string
	ping(ctx context.Context) (jid string, got, expected int, first, last time.Duration, err error)
	// runner runs a runner function on the master.
	runner(ctx context.Context, fun string, args []any, kw *ordered.Map) (any, error)
	stop()
}

func masterOptions(dir string, pub, ret, workers int) master.Options {
	mo := master.DefaultOptions()
	mo.Interface, mo.PublishPort, mo.RetPort, mo.WorkerThreads = "127.0.0.1", pub, ret, workers
	mo.PKIDir, mo.CacheDir, mo.SockDir = dir+"/pki", dir+"/cache", dir+"/sock"
	mo.FileRoots, mo.PillarRoots = map[string][]string{"base": {dir + "/srv"}}, map[string][]string{"base": {dir + "/pillar"}}
	mo.Auth.AutoAccept = true
	mo.Timeout = 60 * time.Second
	return mo
}

type inProcess struct {
	m      *master.Master
	mo     master.Options
	pkiDir string
}

func startInProcess(ctx context.Context, mo master.Options) (*inProcess, error) {
	m, err := master.New(mo, slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, err
	}
	if err := m.Start(ctx); err != nil {
		return nil, err
	}
	return &inProcess{m: m, mo: mo, pkiDir: mo.PKIDir}, nil
}

func (b *inProcess) accepted() int { return acceptedKeys(b.pkiDir) }

// acceptedKeys counts the keys in pki_dir/minions: the master's
// salt/auth events would do, but its event bus drops events for a
// reader that falls behind, as a loaded machine makes this one.
func acceptedKeys(pkiDir string) int {
	ents, err := os.ReadDir(filepath.Join(pkiDir, "minions"))
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), ".") { // not a key being written
			n++
		}
	}
	return n
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(b))[:3], ",")
}

func (b *inProcess) connected() int { return b.m.Subscribers() }
func (b *inProcess) stop()          { b.m.Stop() }

func (b *inProcess) masterRSS() (cur, peak int64) { return procRSS("self") }
func (b *inProcess) masterCPU() time.Duration     { return cpuTime() }
func (b *inProcess) cpuScope() string             { return "the whole process, minions included" }

// procRSS reads VmRSS and VmHWM of a process from /proc.
func procRSS(pid string) (cur, peak int64) {
	data, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		if err != nil {
			continue
		}
		switch k {
		case "VmRSS":
			cur = kb << 10
		case "VmHWM":
			peak = kb << 10
		}
	}
	return cur, peak
}

// ping publishes test.ping to every minion and times the first and the
// last return from the moment of publishing.
func (b *inProcess) ping(ctx context.Context) (jid string, got, expected int, first, last time.Duration, err error) {
	ch, unsub := b.m.Bus().Subscribe()
	defer unsub()
	t0 := time.Now()
	jid, minions, err := b.m.Publish(ctx, master.PublishRequest{Tgt: "*", TgtType: "glob", Fun: "test.ping"})
	if err != nil {
		return "", 0, 0, 0, 0, err
	}
	got, expected, first, last, err = collect(ctx, ch, jid, len(minions), t0)
	return jid, got, expected, first, last, err
}

func (b *inProcess) runner(ctx context.Context, fun string, args []any, kw *ordered.Map) (any, error) {
	return b.m.Runner(ctx, fun, args, kw)
}

func collect(ctx context.Context, ch <-chan master.Event, jid string, n int, t0 time.Time) (got, expected int, first, last time.Duration, err error) {
	prefix := "salt/job/" + jid + "/ret/"
	timeout := time.After(2 * time.Minute)
	for got < n {
		select {
		case ev, ok := <-ch:
			if !ok {
				return got, n, first, last, fmt.Errorf("event stream closed")
			}
			if strings.HasPrefix(ev.Tag, prefix) {
				got++
				d := time.Since(t0)
				if got == 1 {
					first = d
				}
				last = d
			}
		case <-timeout:
			return got, n, first, last, nil
		case <-ctx.Done():
			return got, n, first, last, ctx.Err()
		}
	}
	return got, n, first, last, nil
}

// child is a master in a child process, reached through its local
// socket.
type child struct {
	cmd     *exec.Cmd
	sock    string
	dir     string
	pubPort int
}

func startChild(ctx context.Context, dir string, mo master.Options, cpuProfile string, orderMasters bool) (*child, error) {
	args := []string{"-serve-master", dir, "-pub", strconv.Itoa(mo.PublishPort),
		"-ret", strconv.Itoa(mo.RetPort), "-workers", strconv.Itoa(mo.WorkerThreads)}
	if orderMasters {
		args = append(args, "-order-masters")
	}
	if cpuProfile != "" {
		args = append(args, "-cpuprofile", cpuProfile+".master")
	}
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	// An interrupt, not a kill, so the child writes its profile.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 30 * time.Second
	// A killed bench takes its masters with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &child{cmd: cmd, sock: mo.LocalSocket(), dir: dir, pubPort: mo.PublishPort}
	var cl *master.Client
	for range 300 {
		var err error
		if cl, err = master.Dial(ctx, c.sock); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if cl == nil {
		cmd.Process.Kill()
		return nil, fmt.Errorf("master child did not start")
	}
	cl.Close()
	return c, nil
}

// connected counts the established TCP connections to the child's
// publish port, from /proc/net/tcp: the master's event stream drops
// events when its reader falls behind, so counting start events loses
// minions on a loaded machine.
func (c *child) connected() int {
	data, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return 0
	}
	local := fmt.Sprintf(":%04X ", c.pubPort)
	n := 0
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		// sl local_address rem_address st …; 01 is ESTABLISHED.
		if len(f) > 3 && strings.HasSuffix(f[1]+" ", local) && f[3] == "01" {
			n++
		}
	}
	return n
}

func (c *child) ping(ctx context.Context) (jid string, got, expected int, first, last time.Duration, err error) {
	return c.pingN(ctx, 0)
}

// pingN is ping waiting for n returns (0: as many as the master
// expects; on a master of masters it expects only the syndics).
func (c *child) pingN(ctx context.Context, n int) (jid string, got, expected int, first, last time.Duration, err error) {
	time.Sleep(2 * time.Second) // let the last minions finish subscribing
	cl, err := master.Dial(ctx, c.sock)
	if err != nil {
		return "", 0, 0, 0, 0, err
	}
	defer cl.Close()
	// A stream of its own for each round: the master drops a reader
	// that stalls for 10 s, as one starved by 5,000 sign-ins can.
	ec, err := master.Dial(ctx, c.sock)
	if err != nil {
		return "", 0, 0, 0, 0, err
	}
	defer ec.Close()
	ectx, cancel := context.WithCancel(ctx)
	defer cancel()
	events, err := ec.Events(ectx)
	if err != nil {
		return "", 0, 0, 0, 0, err
	}
	t0 := time.Now()
	jid, minions, err := cl.Publish(ctx, master.PublishRequest{Tgt: "*", TgtType: "glob", Fun: "test.ping"})
	if err != nil {
		return "", 0, 0, 0, 0, err
	}
	if n == 0 {
		n = len(minions)
	}
	got, expected, first, last, err = collect(ctx, events, jid, n, t0)
	return jid, got, expected, first, last, err
}

// runner is salt-run's path: a runner request on the local socket.
func (c *child) runner(ctx context.Context, fun string, args []any, kw *ordered.Map) (any, error) {
	cl, err := master.Dial(ctx, c.sock)
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	return cl.Runner(ctx, fun, args, kw)
}

func (c *child) accepted() int { return acceptedKeys(filepath.Join(c.dir, "pki")) }

func (c *child) masterRSS() (cur, peak int64) { return procRSS(strconv.Itoa(c.cmd.Process.Pid)) }
func (c *child) masterCPU() time.Duration     { return procCPU(strconv.Itoa(c.cmd.Process.Pid)) }
func (c *child) cpuScope() string             { return "the master process alone" }

// procCPU is a process's user+system CPU from /proc/<pid>/stat (clock
// ticks of 10 ms).
func procCPU(pid string) time.Duration {
	data, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0
	}
	// The command name may hold spaces: the fields start after its ')'.
	i := strings.LastIndexByte(string(data), ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(data)[i+1:])
	if len(f) < 13 {
		return 0
	}
	// utime and stime are fields 14 and 15 of stat, 12 and 13 after ')'.
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

func (c *child) stop() {
	_ = c.cmd.Process.Signal(os.Interrupt)
	_ = c.cmd.Wait()
}

// serveMaster is the child side of -split.
func serveMaster(dir string, pub, ret, workers int, orderMasters bool) error {
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
	defer cancel()
	mo := masterOptions(dir, pub, ret, workers)
	if orderMasters {
		mo.OrderMasters, mo.SyndicWait = true, treeSyndicWait
	}
	if raw, err := readRaw(filepath.Join(dir, "jobcache.json")); err == nil {
		mo.Raw = raw
	}
	m, err := master.New(mo, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	return m.Run(ctx)
}

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
