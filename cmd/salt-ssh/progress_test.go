package main

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func TestProgressClearsBeforePrinting(t *testing.T) {
	var w syncBuf
	p := newProgress(&w, 2)
	p.hostStarted("host1")
	p.hostStarted("host2")
	p.host("host1", false, func() { w.Write([]byte("host1 output\n")) })
	p.host("host2", true, func() { w.Write([]byte("host2 output\n")) })
	p.close()
	out := w.b.String()
	for _, want := range []string{"\r\x1b[Khost2 output\n", "1/2 done, 0 failed, 1 running, 0 queued", "2/2 done, 1 failed, 0 running, 0 queued"} {
		if !strings.Contains(out, want) {
			t.Errorf("progress output lacks %q:\n%q", want, out)
		}
	}
	if !strings.HasSuffix(out, "\r\x1b[K") {
		t.Errorf("line not cleared at close: %q", out)
	}
}

// TestProgressNamesSlowest checks the counts and that the line names the
// hosts running longest, oldest first, and forgets the finished ones.
func TestProgressNamesSlowest(t *testing.T) {
	var w syncBuf
	p := newProgress(&w, 6)
	defer p.close()
	base := p.start
	clock := base
	p.mu.Lock()
	p.now = func() time.Time { return clock }
	p.mu.Unlock()
	for i, id := range []string{"host1", "host2", "host3", "host4", "host5"} {
		clock = base.Add(time.Duration(i) * time.Second)
		p.hostStarted(id)
	}
	clock = base.Add(10 * time.Second)
	p.host("host1", true, func() {})
	p.host("host3", false, func() {})
	p.mu.Lock()
	got := p.line()
	p.mu.Unlock()
	want := "2/6 done, 1 failed, 3 running, 1 queued, 10.0s; slowest: host2 9.0s, host4 7.0s, host5 6.0s"
	if got != want {
		t.Errorf("line = %q, want %q", got, want)
	}
}
