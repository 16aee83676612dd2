package transport

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"net"
	"os"
	"runtime"
	"testing"
	"time"
)

// authEcho echoes like echo and marks its peer authenticated when the
// body is "auth", as the master does for an aes load that opens.
func authEcho(ctx context.Context, peer string, body []byte) []byte {
	if string(body) == "auth" {
		Authenticated(ctx)
	}
	return append([]byte("re:"), body[:min(len(body), 16)]...)
}

// holdRequest opens a REQ connection and sends the start of a request
// whose body frame claims claim bytes, then sent bytes of it.
func holdRequest(t *testing.T, ctx context.Context, addr string, claim, sent int) *Conn {
	t.Helper()
	c, err := Dial(ctx, addr, TypeREQ, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	msg := appendHeader(nil, 0, flagMore)
	msg = append(msg, flagLong)
	msg = binary.BigEndian.AppendUint64(msg, uint64(claim))
	msg = append(msg, make([]byte, sent)...)
	if _, err := c.nc.Write(msg); err != nil {
		t.Fatal(err)
	}
	return c
}

// closedByPeer reports whether the router closed c.
func closedByPeer(c *Conn) bool {
	c.nc.SetReadDeadline(time.Now().Add(5 * time.Millisecond))
	_, err := c.nc.Read(make([]byte, 1))
	return err != nil && !errors.Is(err, os.ErrDeadlineExceeded)
}

// TestRouterFreshMessageLimit: a peer not yet authenticated may not send
// more than FreshMessage; once a request of its address was
// authenticated, it may send up to MaxMessage (a 50 MB salt-cp sized
// load here).
func TestRouterFreshMessageLimit(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r, err := ListenRouter(ctx, "127.0.0.1:0", RouterOptions{FreshMessage: 1 << 20}, authEcho)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	req := &Req{Addr: r.Addr().String()}
	defer req.Close()
	if _, err := req.Do(ctx, make([]byte, 2<<20)); err == nil {
		t.Fatal("2 MiB request from an unauthenticated peer answered")
	}
	if r.Dropped.Load() != 1 {
		t.Fatalf("dropped = %d, want 1", r.Dropped.Load())
	}
	if got, err := req.Do(ctx, []byte("auth")); err != nil || string(got) != "re:auth" {
		t.Fatalf("auth: %q %v", got, err)
	}
	big := bytes.Repeat([]byte("x"), 50<<20)
	// A new connection from the same address, as a Salt minion opens
	// one per return.
	req2 := &Req{Addr: r.Addr().String()}
	defer req2.Close()
	if got, err := req2.Do(ctx, big); err != nil || string(got) != "re:"+string(big[:16]) {
		t.Fatalf("50 MB request after authentication: %q %v", got, err)
	}
}

// TestRouterFreshBudget: unauthenticated peers that each hold most of a
// message exhaust the shared budget and are refused, while a small
// request (an _auth) from a fresh peer is still answered and the budget
// comes back whole when they leave.
func TestRouterFreshBudget(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const budgetBytes = 4 << 20
	r, err := ListenRouter(ctx, "127.0.0.1:0", RouterOptions{FreshMessage: 1 << 20, FreshBudget: budgetBytes}, authEcho)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// Each holds 600 KB of a 900 KB body: its buffer has grown to 900 KB,
	// 836 KB of it past the free part, so four fit in 4 MiB.
	const n, fit = 12, 4
	var held []*Conn
	for range n {
		c := holdRequest(t, ctx, r.Addr().String(), 900<<10, 600<<10)
		defer c.Close()
		held = append(held, c)
	}
	closed := func() int {
		k := 0
		for _, c := range held {
			if closedByPeer(c) {
				k++
			}
		}
		return k
	}
	waitFor(t, func() bool { return closed() == n-fit })
	if d := r.Dropped.Load(); d != n-fit {
		t.Fatalf("dropped %d, want %d", d, n-fit)
	}
	if left := r.lim.fresh.budget.left.Load(); left < 0 || left > budgetBytes-fit*(900-64)<<10 {
		t.Fatalf("budget left %d", left)
	}
	req := &Req{Addr: r.Addr().String()}
	defer req.Close()
	if got, err := req.Do(ctx, bytes.Repeat([]byte("a"), 8<<10)); err != nil || len(got) != 19 {
		t.Fatalf("small request with the budget exhausted: %q %v", got, err)
	}
	for _, c := range held {
		c.Close()
	}
	waitFor(t, func() bool { return r.lim.fresh.budget.left.Load() == budgetBytes })
}

// TestHeaderAloneCostsNothing: a frame header claiming 64 MiB followed
// by 33 KB makes the reader allocate about what arrived, not the claim.
func TestHeaderAloneCostsNothing(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	go func() {
		msg := append([]byte{flagLong}, binary.BigEndian.AppendUint64(nil, 64<<20)...)
		b.Write(append(msg, make([]byte, 33<<10)...))
		b.Close()
	}()
	c := &Conn{nc: a, r: newReader(a), max: DefaultMaxMessage}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, _, _, err := c.readMessage(msgLimit{max: c.max})
	runtime.ReadMemStats(&after)
	if err == nil {
		t.Fatal("truncated frame read without error")
	}
	if d := after.TotalAlloc - before.TotalAlloc; d > 8<<20 {
		t.Fatalf("allocated %d bytes for a 33 KB body claiming 64 MiB", d)
	}
}

// TestEmptyFramesCount: endless empty MORE frames cost memory (the
// slice holding each) and count towards the message limit, so 10,000
// of them, 20 KB on the wire, exceed a 64 KiB limit.
func TestEmptyFramesCount(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	go func() {
		msg := bytes.Repeat([]byte{flagMore, 0}, 10000)
		b.Write(append(msg, 0, 1, 'x'))
		b.Close()
	}()
	c := &Conn{nc: a, r: newReader(a), max: 64 << 10}
	frames, _, _, err := c.readMessage(msgLimit{max: c.max})
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("read %d frames, err %v; want ErrTooLarge", len(frames), err)
	}
}
