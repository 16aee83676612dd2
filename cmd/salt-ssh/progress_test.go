package main

import (
	"bytes"
	"strings"
	"sync"
	"testing"
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
	p.host(false, func() { w.Write([]byte("host1 output\n")) })
	p.host(true, func() { w.Write([]byte("host2 output\n")) })
	p.close()
	out := w.b.String()
	for _, want := range []string{"\r\x1b[Khost2 output\n", "1/2 done, 0 failed, 1 pending", "2/2 done, 1 failed, 0 pending"} {
		if !strings.Contains(out, want) {
			t.Errorf("progress output lacks %q:\n%q", want, out)
		}
	}
	if !strings.HasSuffix(out, "\r\x1b[K") {
		t.Errorf("line not cleared at close: %q", out)
	}
}
