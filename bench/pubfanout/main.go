// Command pubfanout measures the master's publisher (internal/transport
// Publisher, our ZMTP PUB with a queue per subscriber) against libzmq's
// PUB socket (pyzmq, as Salt's master uses it) side by side: the same
// subscribers (this process's ZMTP SUB sockets), the same number of
// messages of the same size, and reports messages per second delivered to
// every subscriber, with and without one extra subscriber that never
// reads (its queue fills; the others must not slow down).
//
//	go run ./bench/pubfanout -subs 100,1000 -size 1024 -msgs 2000 -rounds 5
//
// libzmq runs in /usr/bin/python3 with python3-zmq (apt-get install
// python3-zmq); the two publishers alternate round by round so load from
// elsewhere falls on both.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/brinesalt/brine/internal/transport"
)

func main() { os.Exit(run()) }

func run() int {
	subsFlag := flag.String("subs", "100,1000", "comma-separated subscriber counts")
	size := flag.Int("size", 1024, "message size in bytes")
	msgs := flag.Int("msgs", 2000, "messages per round")
	rounds := flag.Int("rounds", 5, "rounds per publisher and case (medians are reported)")
	python := flag.String("python", "/usr/bin/python3", "a python3 with the zmq module")
	only := flag.String("only", "", "run only this publisher (brine or libzmq), e.g. with -cpuprofile")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of this process here")
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
	pubs := []string{"brine", "libzmq"}
	if *only != "" {
		pubs = []string{*only}
	}
	raiseNoFile()
	ctx := context.Background()
	fmt.Printf("# %d messages of %d bytes per round, %d rounds, load %s\n", *msgs, *size, *rounds, loadavg())
	fmt.Println("subscribers\tslow\tpublisher\tmsgs/s to all (median)\tdeliveries/s\trounds msgs/s")
	for _, f := range strings.Split(*subsFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		for _, slow := range []bool{false, true} {
			res := map[string][]float64{}
			for range *rounds {
				for _, name := range pubs {
					rate, err := round(ctx, name, *python, n, *msgs, *size, slow)
					if err != nil {
						fmt.Fprintf(os.Stderr, "%s, %d subscribers: %v\n", name, n, err)
						return 1
					}
					res[name] = append(res[name], rate)
				}
			}
			for _, name := range pubs {
				med := median(res[name])
				fmt.Printf("%d\t%v\t%s\t%.0f\t%.0f\t%s\n", n, slow, name, med, med*float64(n), fmtRates(res[name]))
			}
			if len(pubs) == 2 {
				fmt.Printf("%d\t%v\tratio brine/libzmq\t%.2f\n", n, slow, median(res["brine"])/median(res["libzmq"]))
			}
		}
	}
	return 0
}

// publisher is one PUB socket under test.
type publisher interface {
	addr() string
	// send publishes msg; warm publishes a one-byte message.
	send(count int, msg []byte) error
	close()
}

// round times one publisher: n subscribers connect and subscribe (plus
// one that never reads when slow), warm-up messages are sent until every
// subscriber has one, then msgs messages; the rate is msgs over the time
// until the last subscriber has the last message.
func round(ctx context.Context, name, python string, n, msgs, size int, slow bool) (float64, error) {
	hwm := msgs + 1000 // no drops for subscribers that keep reading
	var p publisher
	var err error
	if name == "brine" {
		p, err = newBrine(ctx, hwm)
	} else {
		p, err = newLibzmq(ctx, python, hwm)
	}
	if err != nil {
		return 0, err
	}
	defer p.close()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	if slow {
		c, err := transport.Dial(ctx, p.addr(), transport.TypeSUB, nil, 0)
		if err != nil {
			return 0, err
		}
		defer c.Close()
		if err := c.Subscribe(nil); err != nil {
			return 0, err
		}
	}
	var warm atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, n)
	conns := make([]*transport.Conn, n)
	for i := range n {
		c, err := transport.Dial(ctx, p.addr(), transport.TypeSUB, nil, 1<<20)
		if err != nil {
			return 0, err
		}
		conns[i] = c
		if err := c.Subscribe(nil); err != nil {
			return 0, err
		}
	}
	defer func() {
		for _, c := range conns {
			c.Close()
		}
		wg.Wait()
	}()
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- receive(c, msgs, size, &warm)
		}()
	}
	for warm.Load() < int64(n) {
		if err := p.send(1, []byte{'w'}); err != nil {
			return 0, err
		}
		if ctx.Err() != nil {
			return 0, fmt.Errorf("only %d of %d subscribers got the warm-up message", warm.Load(), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	msg := make([]byte, size)
	for i := range msg {
		msg[i] = 'd'
	}
	start := time.Now()
	if err := p.send(msgs, msg); err != nil {
		return 0, err
	}
	for range n {
		if err := <-errs; err != nil {
			return 0, err
		}
	}
	return float64(msgs) / time.Since(start).Seconds(), nil
}

// receive counts a subscriber's messages: warm-ups (one byte) until the
// first, then size-byte messages until msgs of them.
func receive(c *transport.Conn, msgs, size int, warm *atomic.Int64) error {
	warmed := false
	for got := 0; got < msgs; {
		frames, cmd, err := c.Recv()
		if err != nil {
			return fmt.Errorf("subscriber: %w", err)
		}
		if cmd || len(frames) != 1 {
			continue
		}
		switch len(frames[0]) {
		case 1:
			if !warmed {
				warmed = true
				warm.Add(1)
			}
		case size:
			got++
		}
	}
	return nil
}

type brinePub struct{ p *transport.Publisher }

func newBrine(ctx context.Context, hwm int) (*brinePub, error) {
	p, err := transport.ListenPub(ctx, "127.0.0.1:0", transport.PubOptions{HWM: hwm, MaxMessage: 1 << 20})
	if err != nil {
		return nil, err
	}
	return &brinePub{p: p}, nil
}

func (b *brinePub) addr() string { return b.p.Addr().String() }
func (b *brinePub) close()       { b.p.Close() }

func (b *brinePub) send(count int, msg []byte) error {
	for range count {
		b.p.Publish(msg)
	}
	return nil
}

// libzmqScript binds a PUB socket (one I/O thread, as Salt's master
// context has) and publishes on command: "send COUNT SIZE" sends COUNT
// messages of SIZE bytes (SIZE 1 is the warm-up byte "w").
const libzmqScript = `
import sys, zmq
ctx = zmq.Context(1)
s = ctx.socket(zmq.PUB)
s.setsockopt(zmq.SNDHWM, int(sys.argv[1]))
s.setsockopt(zmq.LINGER, 0)
port = s.bind_to_random_port("tcp://127.0.0.1")
print(port, flush=True)
for line in sys.stdin:
    _, count, size = line.split()
    msg = b"w" if size == "1" else b"d" * int(size)
    for _ in range(int(count)):
        s.send(msg)
    print("ok", flush=True)
`

type libzmqPub struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	port string
}

func newLibzmq(ctx context.Context, python string, hwm int) (*libzmqPub, error) {
	cmd := exec.CommandContext(ctx, python, "-c", libzmqScript, strconv.Itoa(hwm))
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", python, err)
	}
	l := &libzmqPub{cmd: cmd, in: in, out: bufio.NewReader(outPipe)}
	line, err := l.out.ReadString('\n')
	if err != nil {
		l.close()
		return nil, fmt.Errorf("libzmq publisher did not start (is python3-zmq installed?): %w", err)
	}
	l.port = strings.TrimSpace(line)
	return l, nil
}

func (l *libzmqPub) addr() string { return net.JoinHostPort("127.0.0.1", l.port) }

func (l *libzmqPub) send(count int, msg []byte) error {
	if _, err := fmt.Fprintf(l.in, "send %d %d\n", count, len(msg)); err != nil {
		return err
	}
	line, err := l.out.ReadString('\n')
	if err != nil {
		return fmt.Errorf("libzmq publisher: %w", err)
	}
	if strings.TrimSpace(line) != "ok" {
		return errors.New("libzmq publisher: " + line)
	}
	return nil
}

func (l *libzmqPub) close() {
	l.in.Close()
	_ = l.cmd.Wait()
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

func fmtRates(v []float64) string {
	out := make([]string, len(v))
	for i, r := range v {
		out[i] = strconv.FormatFloat(r, 'f', 0, 64)
	}
	return strings.Join(out, " ")
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

func raiseNoFile() {
	var rl syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl) == nil && rl.Cur < rl.Max {
		rl.Cur = rl.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl)
	}
}
