package transport

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/testsupport/testhosts"
)

// pyzmq runs a Python script with pyzmq (libzmq), skipping when the
// module is not installed (scripts/install-deps.sh installs
// python3-zmq) unless BRINE_REQUIRE_HOSTS=1 demands every peer.
func pyzmq(t *testing.T, ctx context.Context, script string) *exec.Cmd {
	t.Helper()
	for _, py := range []string{"python3", "/usr/bin/python3"} {
		if exec.Command(py, "-c", "import zmq").Run() == nil {
			return exec.CommandContext(ctx, py, "-c", script)
		}
	}
	testhosts.Skip(t, "python3-zmq not installed (scripts/install-deps.sh installs it)")
	return nil
}

// TestLibzmqPeers has libzmq's REQ and SUB sockets, as Salt's minion
// uses them, talk to the Router and Publisher.
func TestLibzmqPeers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := ListenRouter(ctx, "127.0.0.1:0", RouterOptions{}, echo)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p, err := ListenPub(ctx, "127.0.0.1:0", PubOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	script := fmt.Sprintf(`
import zmq, sys
c = zmq.Context()
req = c.socket(zmq.REQ)
req.setsockopt(zmq.IDENTITY, b"minion1")
req.connect("tcp://%s")
req.send(b"ping")
print(req.recv().decode())
sub = c.socket(zmq.SUB)
sub.setsockopt(zmq.SUBSCRIBE, b"")
sub.connect("tcp://%s")
print("subscribed", flush=True)
print(sub.recv().decode(), flush=True)
`, r.Addr(), p.Addr())
	cmd := pyzmq(t, ctx, script)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for {
		select {
		case err := <-done:
			got := out.String()
			if err != nil || !strings.Contains(got, "re:ping\n") || !strings.Contains(got, "job-payload\n") {
				t.Fatalf("pyzmq: %v\n%s", err, got)
			}
			return
		case <-time.After(50 * time.Millisecond):
			p.Publish([]byte("job-payload"))
		}
	}
}

// TestLibzmqServers has the client side (Req, SUB) talk to libzmq's
// ROUTER and PUB sockets.
func TestLibzmqServers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	script := `
import zmq, time
c = zmq.Context()
router = c.socket(zmq.ROUTER)
rp = router.bind_to_random_port("tcp://127.0.0.1")
pub = c.socket(zmq.PUB)
pp = pub.bind_to_random_port("tcp://127.0.0.1")
print(rp, pp, flush=True)
ident, empty, body = router.recv_multipart()
router.send_multipart([ident, b"", b"re:" + body])
for i in range(200):
    pub.send(b"pub-" + ident)
    time.sleep(0.05)
`
	cmd := pyzmq(t, ctx, script)
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var rp, pp int
	if _, err := fmt.Fscan(stdout, &rp, &pp); err != nil {
		t.Fatal(err)
	}
	sub, err := Dial(ctx, fmt.Sprintf("127.0.0.1:%d", pp), TypeSUB, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if err := sub.Subscribe(nil); err != nil {
		t.Fatal(err)
	}
	req := &Req{Addr: fmt.Sprintf("127.0.0.1:%d", rp), Identity: []byte("m9")}
	defer req.Close()
	got, err := req.Do(ctx, []byte("hello"))
	if err != nil || string(got) != "re:hello" {
		t.Fatalf("req: %q %v", got, err)
	}
	frames, _, err := sub.Recv()
	if err != nil || len(frames) != 1 || string(frames[0]) != "pub-m9" {
		t.Fatalf("sub: %q %v", frames, err)
	}
}

// TestLibzmqLimits has libzmq REQ peers meet the limits for peers not
// yet authenticated: a stranger's 2 MiB request is refused (libzmq's REQ
// then waits in vain, as for any lost request), and after a request the
// handler authenticated, a 50 MB request from the same address (a new
// socket, as Salt opens one per return) is answered. A libzmq SUB then
// takes a 50 MB publication, the size of a large salt-cp chunk.
func TestLibzmqLimits(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r, err := ListenRouter(ctx, "127.0.0.1:0", RouterOptions{FreshMessage: 1 << 20}, authEcho)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p, err := ListenPub(ctx, "127.0.0.1:0", PubOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	script := fmt.Sprintf(`
import zmq
c = zmq.Context()
def req():
    s = c.socket(zmq.REQ)
    s.setsockopt(zmq.LINGER, 0)
    s.setsockopt(zmq.RCVTIMEO, 3000)
    s.connect("tcp://%s")
    return s
s = req()
s.send(b"x" * (2 << 20))
try:
    s.recv()
    print("stranger answered", flush=True)
except zmq.Again:
    print("stranger refused", flush=True)
s.close()
s = req()
s.send(b"auth")
print(s.recv().decode(), flush=True)
s.close()
s = req()
s.setsockopt(zmq.RCVTIMEO, 30000)
s.send(b"y" * 50000000)
print(s.recv().decode(), flush=True)
sub = c.socket(zmq.SUB)
sub.setsockopt(zmq.SUBSCRIBE, b"")
sub.connect("tcp://%s")
print("subscribed", flush=True)
m = sub.recv()
print("publication", len(m), flush=True)
`, r.Addr(), p.Addr())
	cmd := pyzmq(t, ctx, script)
	var out logBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	chunk := bytes.Repeat([]byte("z"), 50<<20)
	for {
		select {
		case err := <-done:
			want := "stranger refused\nre:auth\nre:" + strings.Repeat("y", 16) + "\nsubscribed\npublication " + fmt.Sprint(len(chunk)) + "\n"
			if got := out.String(); err != nil || got != want {
				t.Fatalf("pyzmq: %v\n%s\nwant\n%s", err, got, want)
			}
			if r.Dropped.Load() != 1 {
				t.Errorf("dropped %d, want 1", r.Dropped.Load())
			}
			return
		case <-time.After(200 * time.Millisecond):
			if strings.Contains(out.String(), "subscribed") && p.Subscribers() == 1 {
				p.Publish(chunk)
			}
		}
	}
}

// TestLibzmqDuplicateIdentity has libzmq's REQ sockets, two with the
// same identity, talk to the Router: as a libzmq ROUTER does with
// ZMQ_ROUTER_HANDOVER off (the script checks that first), the first is
// answered, the second ignored, and a peer without identity answered.
func TestLibzmqDuplicateIdentity(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := ListenRouter(ctx, "127.0.0.1:0", RouterOptions{}, echo)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	script := fmt.Sprintf(`
import zmq, time
c = zmq.Context()
def req(addr, ident):
    s = c.socket(zmq.REQ)
    s.setsockopt(zmq.LINGER, 0)
    if ident:
        s.setsockopt(zmq.IDENTITY, ident)
    s.connect(addr)
    return s
def peers(addr, tag):
    a = req(addr, b"m1")
    a.send(b"one")
    if not a.poll(5000):
        return tag + " first:none"
    a.recv()
    time.sleep(0.2)
    b = req(addr, b"m1")
    b.send(b"two")
    second = "answered" if b.poll(1000) else "ignored"
    n = req(addr, None)
    n.send(b"anon")
    anon = "answered" if n.poll(5000) else "ignored"
    return "%%s first:answered second:%%s anon:%%s" %% (tag, second, anon)
# libzmq's own ROUTER, for reference.
router = c.socket(zmq.ROUTER)
port = router.bind_to_random_port("tcp://127.0.0.1")
import threading
def serve():
    while True:
        try:
            f = router.recv_multipart()
        except zmq.ZMQError:
            return
        router.send_multipart(f[:-1] + [b"re:" + f[-1]])
threading.Thread(target=serve, daemon=True).start()
print(peers("tcp://127.0.0.1:%%d" %% port, "libzmq"), flush=True)
print(peers("tcp://%s", "brine"), flush=True)
`, r.Addr())
	cmd := pyzmq(t, ctx, script)
	out, err := cmd.CombinedOutput()
	want := "libzmq first:answered second:ignored anon:answered\nbrine first:answered second:ignored anon:answered\n"
	if err != nil || string(out) != want {
		t.Fatalf("pyzmq: %v\n%s\nwant:\n%s", err, out, want)
	}
}
