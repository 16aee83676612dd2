package transport

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestRouterSkipsAbandonedRequests has more peers than a worker can
// serve send a request each and leave (as minions that time out do)
// while the only worker is busy: none of their requests may reach the
// handler afterwards, and a peer that stays is still answered.
func TestRouterSkipsAbandonedRequests(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	release := make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	defer free() // before r.Close, which waits for the worker
	var calls atomic.Int64
	r, err := ListenRouter(ctx, "127.0.0.1:0", RouterOptions{Workers: 1}, func(_ context.Context, _ string, body []byte) []byte {
		if calls.Add(1) == 1 {
			<-release
		}
		return body
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { free(); r.Close() }()
	first, err := Dial(ctx, r.Addr().String(), TypeREQ, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	if err := first.Send([][]byte{{}, []byte("first")}, false); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return calls.Load() == 1 })
	const n = 1200 // more than any fixed queue a blocked reader could hide behind
	for range n {
		c, err := Dial(ctx, r.Addr().String(), TypeREQ, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Send([][]byte{{}, []byte("abandoned")}, false); err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
	waitFor(t, func() bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		return len(r.conns) == 1
	})
	free()
	if _, _, err := first.Recv(); err != nil {
		t.Fatal(err)
	}
	live := &Req{Addr: r.Addr().String()}
	defer live.Close()
	got, err := live.Do(ctx, []byte("live"))
	if err != nil || string(got) != "live" {
		t.Fatalf("live request: %q, %v", got, err)
	}
	if c := calls.Load(); c != 2 {
		t.Errorf("handler ran %d times, want 2 (first and live): abandoned requests were served", c)
	}
	// A peer that closes at once may reset the connection before the
	// router has read its request (a reset discards unread data), so a
	// few may never reach the queue; none may be served.
	if s := r.Skipped.Load(); s < n*9/10 || s > n {
		t.Errorf("skipped %d, want nearly all of %d", s, n)
	}
}

// TestRouterIgnoresDuplicateIdentity has two request peers announce the
// same identity, as a salt-call did beside its running minion: the
// router, like libzmq's with ZMQ_ROUTER_HANDOVER off, answers the peer
// that holds the identity and ignores the second one; once the first
// leaves, the identity is free again. Peers without an identity never
// collide.
func TestRouterIgnoresDuplicateIdentity(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	r, err := ListenRouter(ctx, "127.0.0.1:0", RouterOptions{}, echo)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	addr := r.Addr().String()
	first := &Req{Addr: addr, Identity: []byte("m1")}
	defer first.Close()
	if got, err := first.Do(ctx, []byte("one")); err != nil || string(got) != "re:one" {
		t.Fatalf("first peer: %q %v", got, err)
	}
	second := &Req{Addr: addr, Identity: []byte("m1")}
	defer second.Close()
	sctx, scancel := context.WithTimeout(ctx, 2*time.Second)
	got, err := second.Do(sctx, []byte("two"))
	scancel()
	if err == nil {
		t.Fatalf("second peer with a held identity was answered: %q", got)
	}
	if got, err := first.Do(ctx, []byte("three")); err != nil || string(got) != "re:three" {
		t.Fatalf("first peer after the duplicate: %q %v", got, err)
	}
	for range 2 {
		anon := &Req{Addr: addr}
		if got, err := anon.Do(ctx, []byte("anon")); err != nil || string(got) != "re:anon" {
			t.Fatalf("peer without identity: %q %v", got, err)
		}
		anon.Close()
	}
	first.Close()
	// The router sees the first peer leave when it reads its EOF; until
	// then the identity is still held.
	again := &Req{Addr: addr, Identity: []byte("m1")}
	defer again.Close()
	waitFor(t, func() bool {
		actx, acancel := context.WithTimeout(ctx, 500*time.Millisecond)
		defer acancel()
		got, err := again.Do(actx, []byte("four"))
		return err == nil && string(got) == "re:four"
	})
}
