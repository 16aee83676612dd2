package netapi

import (
	"context"
	"runtime"
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/master"
)

// TestHubDropsStalledSubscriber: a stream that does not read is dropped
// when its buffer is full; the others get every event.
func TestHubDropsStalledSubscriber(t *testing.T) {
	h := newHub()
	stalled := h.subscribe(2, false)
	live := h.subscribe(10, false)
	for i := range 5 {
		h.fire(master.Event{Tag: "t", Data: ordered.FromPairs("i", i)})
		if ev := <-live.ch; ev.Data.Value("i") != i {
			t.Fatalf("live subscriber got %v", ev.Data)
		}
	}
	n := 0
	for range stalled.ch {
		n++
	}
	if n != 2 || h.count() != 1 {
		t.Errorf("stalled subscriber read %d before its channel closed; %d subscribers left", n, h.count())
	}
}

// TestJobSubscriber: a job listener takes every job event while a
// publish is in flight, then only its own jid's.
func TestJobSubscriber(t *testing.T) {
	h := newHub()
	s := h.subscribe(10, true)
	s.begin()
	h.fire(master.Event{Tag: "salt/job/1/ret/m1"})
	s.end("1")
	h.fire(master.Event{Tag: "salt/job/2/ret/m1"})
	h.fire(master.Event{Tag: "salt/job/1/ret/m2"})
	h.fire(master.Event{Tag: "salt/run/1/ret"})
	h.fire(master.Event{Tag: "salt/key"})
	// A master of masters: a syndic's report of the lower tier's
	// minions (master.Tiers), and a job's bare minion-list event.
	h.fire(master.Event{Tag: "syndic/syn1/salt/job/1/new"})
	h.fire(master.Event{Tag: "syndic/syn1/salt/job/2/new"})
	h.fire(master.Event{Tag: "syndic/syn1/1"})
	h.fire(master.Event{Tag: "2"})
	h.fire(master.Event{Tag: "1"})
	h.fire(master.Event{Tag: "syndic/syn1/salt/key"})
	h.fire(master.Event{Tag: "syndic/"})
	var got []string
	for len(s.evs) > 0 {
		got = append(got, (<-s.evs).Tag)
	}
	want := "[salt/job/1/ret/m1 salt/job/1/ret/m2 salt/run/1/ret syndic/syn1/salt/job/1/new syndic/syn1/1 1]"
	if r := fmtList(got); r != want {
		t.Errorf("got %s, want %s", r, want)
	}
}

func fmtList(l []string) string {
	out := "["
	for i, s := range l {
		if i > 0 {
			out += " "
		}
		out += s
	}
	return out + "]"
}

// TestHubEndClosesAll: the master's stream ending closes every listener
// and later ones at once.
func TestHubEndClosesAll(t *testing.T) {
	h := newHub()
	s := h.subscribe(1, false)
	ch := make(chan master.Event)
	close(ch)
	h.run(ch)
	if _, ok := <-s.ch; ok {
		t.Error("listener not closed")
	}
	if _, ok := <-h.subscribe(1, true).evs; ok {
		t.Error("a listener after the end is not closed")
	}
}

// TestLimiter: thread_pool requests run at once, socket_queue_size more
// wait, the rest are refused.
func TestLimiter(t *testing.T) {
	l := newLimiter(1, 1)
	ctx := context.Background()
	if !l.acquire(ctx) {
		t.Fatal("first slot")
	}
	waited := make(chan bool)
	go func() { waited <- l.acquire(ctx) }()
	for l.waiting.Load() != 1 {
		runtime.Gosched() // until the second request is queued
	}
	if l.acquire(ctx) {
		t.Fatal("a third request with the queue full must be refused")
	}
	l.release()
	if !<-waited {
		t.Fatal("the queued request did not get the freed slot")
	}
	l.release()
}
