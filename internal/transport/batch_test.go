package transport

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"
)

// TestPublishBatches publishes faster than the subscriber reads, so the
// writer sends queued messages in vectored batches, and checks every
// message arrives whole and in order: short and long (> 255 bytes)
// frames, single- and multi-frame messages.
func TestPublishBatches(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const n = 3000
	p, err := ListenPub(ctx, "127.0.0.1:0", PubOptions{HWM: n})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	sub, err := Dial(ctx, p.Addr().String(), TypeSUB, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if err := sub.Subscribe(nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return p.Subscribers() == 1 && p.wantsAll() })
	msg := func(i int) [][]byte {
		body := bytes.Repeat([]byte{byte('a' + i%26)}, i%700)
		if i%3 == 0 {
			return [][]byte{[]byte(fmt.Sprintf("topic%d", i)), body}
		}
		return [][]byte{append([]byte(fmt.Sprintf("%05d", i)), body...)}
	}
	for i := range n {
		p.Publish(msg(i)...)
	}
	for i := range n {
		got, _, err := sub.Recv()
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if want := msg(i); len(got) != len(want) || !bytes.Equal(bytes.Join(got, nil), bytes.Join(want, nil)) {
			t.Fatalf("message %d: got %d frames %q…, want %d frames", i, len(got), bytes.Join(got, nil)[:min(8, len(bytes.Join(got, nil)))], len(want))
		}
	}
	if d := p.Dropped.Load(); d != 0 {
		t.Errorf("%d messages dropped below the high-water mark", d)
	}
}

// wantsAll reports whether every subscriber has subscribed to something.
func (p *Publisher) wantsAll() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for s := range p.subs {
		s.mu.Lock()
		n := len(s.topics)
		s.mu.Unlock()
		if n == 0 {
			return false
		}
	}
	return true
}
