package transport

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zeromq/zmq4"
)

func echo(_ context.Context, _ string, body []byte) []byte {
	return append([]byte("re:"), body...)
}

// TestZmq4Interop talks to the Router and Publisher with zmq4's REQ and
// SUB sockets, an independent ZMTP implementation.
func TestZmq4Interop(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r, err := ListenRouter(ctx, "127.0.0.1:0", RouterOptions{Workers: 2}, echo)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p, err := ListenPub(ctx, "127.0.0.1:0", PubOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()

	req := zmq4.NewReq(ctx, zmq4.WithID(zmq4.SocketIdentity("m1")))
	defer req.Close()
	if err := req.Dial("tcp://" + r.Addr().String()); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		body := fmt.Sprintf("hello %d", i)
		if err := req.Send(zmq4.NewMsgString(body)); err != nil {
			t.Fatal(err)
		}
		m, err := req.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if got := string(m.Bytes()); got != "re:"+body {
			t.Fatalf("reply %q", got)
		}
	}

	sub := zmq4.NewSub(ctx)
	defer sub.Close()
	if err := sub.Dial("tcp://" + p.Addr().String()); err != nil {
		t.Fatal(err)
	}
	if err := sub.SetOption(zmq4.OptionSubscribe, ""); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return p.Subscribers() == 1 })
	got := make(chan string, 10)
	go func() {
		m, err := sub.Recv()
		if err == nil {
			got <- string(m.Frames[0])
		}
	}()
	deadline := time.After(10 * time.Second)
	for {
		p.Publish([]byte("job"))
		select {
		case s := <-got:
			if s != "job" {
				t.Fatalf("got %q", s)
			}
			return
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			t.Fatal("no publication received")
		}
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for i := 0; i < 500; i++ {
		if cond() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("condition not reached")
}

// TestStalledSubscriber checks that a subscriber that never reads does
// not delay the others.
func TestStalledSubscriber(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := ListenPub(ctx, "127.0.0.1:0", PubOptions{HWM: 50})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	stalled, err := Dial(ctx, p.Addr().String(), TypeSUB, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.Close()
	if err := stalled.Subscribe(nil); err != nil {
		t.Fatal(err)
	}
	live, err := Dial(ctx, p.Addr().String(), TypeSUB, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	if err := live.Subscribe(nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		n := 0
		for s := range p.subs {
			s.mu.Lock()
			n += len(s.topics)
			s.mu.Unlock()
		}
		return n == 2
	})
	// 400 messages of 256 KiB: 100 MiB, far beyond the socket buffers of
	// the stalled peer, which never reads.
	const n = 400
	payload := bytes.Repeat([]byte("x"), 256<<10)
	var received atomic.Int64
	go func() {
		for received.Load() < n {
			frames, _, err := live.Recv()
			if err != nil {
				return
			}
			if len(frames) == 1 && len(frames[0]) == len(payload)+4 {
				received.Add(1)
			}
		}
	}()
	// The publisher keeps within half a queue of the live subscriber, so
	// the live one never drops; the stalled one must fill up and drop.
	for i := range n {
		for int64(i)-received.Load() > 25 {
			if ctx.Err() != nil {
				t.Fatalf("live subscriber stuck at %d of %d: held up by the stalled one", received.Load(), n)
			}
			time.Sleep(time.Millisecond)
		}
		msg := binary.BigEndian.AppendUint32(nil, uint32(i))
		p.Publish(append(msg, payload...))
	}
	for received.Load() < n {
		if ctx.Err() != nil {
			t.Fatalf("live subscriber received %d of %d", received.Load(), n)
		}
		time.Sleep(time.Millisecond)
	}
	if p.Dropped.Load() == 0 {
		t.Fatal("expected drops for the stalled subscriber")
	}
}

// TestRouterRefusesGarbage sends an oversized frame header and garbage;
// the router closes those connections and keeps serving others.
func TestRouterRefusesGarbage(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r, err := ListenRouter(ctx, "127.0.0.1:0", RouterOptions{MaxMessage: 1 << 20}, echo)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// Not ZMTP at all.
	nc, err := net.Dial("tcp", r.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	nc.Write(bytes.Repeat([]byte{0x41}, 100))
	buf := make([]byte, 200)
	nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		if _, err := nc.Read(buf); err != nil {
			break
		}
	}
	nc.Close()
	// A frame header declaring 2^62 bytes.
	c, err := Dial(ctx, r.Addr().String(), TypeREQ, []byte("x"), 0)
	if err != nil {
		t.Fatal(err)
	}
	hdr := []byte{flagLong, 0x40, 0, 0, 0, 0, 0, 0, 0}
	c.nc.Write(hdr)
	if _, _, err := c.Recv(); err == nil {
		t.Fatal("connection stayed open after an oversized frame")
	}
	// Over the limit for real.
	req := &Req{Addr: r.Addr().String()}
	defer req.Close()
	if _, err := req.Do(ctx, make([]byte, 2<<20)); err == nil {
		t.Fatal("oversized request answered")
	}
	got, err := req.Do(ctx, []byte("ok"))
	if err != nil || string(got) != "re:ok" {
		t.Fatalf("after refusals: %q, %v", got, err)
	}
	if r.Dropped.Load() < 2 {
		t.Fatalf("dropped = %d", r.Dropped.Load())
	}
}
