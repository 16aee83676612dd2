// Command apibench measures a salt-api (Brine's, or Salt's rest_cherrypy
// as the peer) over HTTPS on loopback, the way its clients use it:
//
//   - POST / {"client": "local", "tgt": "*", "fun": "test.ping"} round
//     trips against every minion;
//   - local_async + GET /jobs/<jid>, closed loop at -conc clients:
//     requests per second, p50 and p99 latency;
//   - POST /login rate with the given eauth (PAM in bench/apibench/run.sh);
//   - local test.ping round trips while -subs /events subscribers are
//     open, reading or stalled, against none, and how the returns reached
//     the reading subscribers.
//
// It also runs the same closed loop against a fixed-answer HTTPS server
// in this process (-floor), the load generator's own ceiling, and reports
// its own CPU time, so its overhead is seen beside every figure.
//
// With -serve-swarm it instead runs -minions Brine minions in this process
// against the master at -master (Brine's or Salt's) until stdin closes;
// run.sh starts one such process beside the load generator, so the
// generator's CPU time is its own.
//
//	go run ./bench/apibench -url https://127.0.0.1:8000 -user bench -pass-file pw -eauth pam
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

type options struct {
	url, user, pass, eauth, label string
	minions, conc, reps           int
	logins, loginConc             int
	jobs                          int
	subs                          []int
	dur                           time.Duration
	floor                         bool
}

func main() { os.Exit(run()) }

func run() int {
	var o options
	flag.StringVar(&o.url, "url", "https://127.0.0.1:8000", "salt-api base URL")
	flag.StringVar(&o.user, "user", "", "eauth user")
	passFile := flag.String("pass-file", "", "file holding the eauth password (a secret stays out of argv and the environment)")
	flag.StringVar(&o.eauth, "eauth", "pam", "eauth backend")
	flag.StringVar(&o.label, "label", "brine", "name of this column")
	flag.IntVar(&o.minions, "minions", 100, "minions expected to answer (and, with -serve-swarm, started)")
	flag.IntVar(&o.conc, "conc", 50, "concurrent clients for the local_async run")
	flag.DurationVar(&o.dur, "dur", 20*time.Second, "length of the local_async run")
	flag.IntVar(&o.reps, "reps", 20, "local test.ping round trips")
	flag.IntVar(&o.logins, "logins", 200, "logins for the /login rate")
	flag.IntVar(&o.loginConc, "login-conc", 10, "concurrent clients for the /login rate")
	subs := flag.String("subs", "1000", "comma-separated /events subscriber counts (\"\" for none)")
	flag.IntVar(&o.jobs, "jobs", 100, "jobs run with and without subscribers")
	flag.BoolVar(&o.floor, "floor", true, "measure the load generator against a fixed-answer server first")
	serve := flag.Bool("serve-swarm", false, "run the minions only, until stdin closes")
	masterHost := flag.String("master", "127.0.0.1", "with -serve-swarm: the master's address")
	retPort := flag.Int("ret", 4506, "with -serve-swarm: the master's ret_port")
	pubPort := flag.Int("pub", 4505, "with -serve-swarm: the master's publish_port")
	zmqFiltering := flag.Bool("zmq-filtering", false, "with -serve-swarm: the minions use zmq_filtering (set it on the master too)")
	unsigned := flag.Bool("unsigned", false, "with -serve-swarm: the minions take unsigned publications (a master with sign_pub_messages: False)")
	keydir := flag.String("keydir", filepath.Join(os.TempDir(), "minionswarm-keys"), "with -serve-swarm: where minion keys are kept between runs")
	flag.Parse()
	if *passFile != "" {
		b, err := os.ReadFile(*passFile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "apibench:", err)
			return 1
		}
		o.pass = strings.TrimRight(string(b), "\n")
	}
	for _, f := range strings.FieldsFunc(*subs, func(r rune) bool { return r == ',' }) {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			fmt.Fprintln(os.Stderr, "apibench: -subs:", err)
			return 2
		}
		o.subs = append(o.subs, n)
	}
	raiseNoFile()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var err error
	if *serve {
		err = serveSwarm(ctx, o.minions, *masterHost, *retPort, *pubPort, *keydir, *zmqFiltering, *unsigned)
	} else {
		err = bench(ctx, o)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "apibench:", err)
		return 1
	}
	return 0
}

// serveSwarm runs the minions until stdin closes or a signal comes.
func serveSwarm(ctx context.Context, n int, host string, ret, pub int, keydir string, zmqFiltering, unsigned bool) error {
	work, err := os.MkdirTemp("", "apibench-swarm")
	if err != nil {
		return fmt.Errorf("make work dir: %w", err)
	}
	defer os.RemoveAll(work)
	s, err := startSwarm(ctx, n, host, ret, pub, keydir, work, zmqFiltering, unsigned)
	if err != nil {
		return err
	}
	defer s.Stop()
	fmt.Fprintf(os.Stderr, "apibench: %d minions started against %s:%d\n", n, host, ret)
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
	}
	return nil
}

func raiseNoFile() {
	var rl syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl) == nil && rl.Cur < 65536 {
		rl.Cur, rl.Max = max(rl.Max, 65536), max(rl.Max, 65536)
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl)
	}
}
