package relay

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
)

// BenchmarkRelayHosts runs whole relay runs, coordinator and agents in
// this process over real TCP, at the sizes of issue 18, with small
// chunks: it measures what the controller's scheduling and the agents'
// per-chunk work cost as the number of hosts grows (a cost per host that
// rises with N is the O(N²) the issue forbids).
func BenchmarkRelayHosts(b *testing.B) {
	for _, n := range []int{50, 200, 1000} {
		b.Run(fmt.Sprintf("hosts=%d", n), func(b *testing.B) {
			path, sum := release(b, 20*testChunk)
			for b.Loop() {
				c, err := NewCoordinator(CoordOptions{ChunkSize: testChunk})
				if err != nil {
					b.Fatal(err)
				}
				hosts := make([]*host, n)
				for i := range hosts {
					hosts[i] = startHost(b, fmt.Sprint("h", i), b.TempDir(), nil)
				}
				joinAll(b, c, hosts, path, sum)
				s := c.Stats()
				c.Close()
				for _, h := range hosts {
					h.cancel()
					h.stdin.Close()
				}
				b.ReportMetric(float64(s.ControllerChunks)/20, "copies/op")
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "µs/host")
		})
	}
}

// TestRelayFaultsAt200: 200 hosts, agents over real TCP, with both faults
// of issue 18 at once: a host that serves corrupt bytes (it joined first
// and holds everything) and a host that drops out after its first
// chunk, while others may be fetching from it. Every other host ends with
// the whole file, the liar is caught and distrusted, and the dropped
// host's Join reports that it left.
func TestRelayFaultsAt200(t *testing.T) {
	if testing.Short() {
		t.Skip("200 agents in -short")
	}
	path, sum := release(t, 20*testChunk)
	c := newCoord(t)
	liar := startHost(t, "liar", t.TempDir(), func(b []byte) []byte {
		b = bytes.Clone(b)
		b[len(b)/2] ^= 0x80
		return b
	})
	joinAll(t, c, []*host{liar}, path, sum)
	hosts := make([]*host, 200)
	for i := range hosts {
		hosts[i] = startHost(t, fmt.Sprint("h", i), t.TempDir(), nil)
	}
	drop := hosts[7]
	r, w := io.Pipe()
	src := drop.events
	go func() {
		defer w.Close()
		br := bufio.NewReader(src)
		for {
			line, err := br.ReadString('\n')
			if strings.HasPrefix(line, "have ") {
				drop.cancel()
				drop.stdin.Close()
				io.Copy(io.Discard, br) // the controller hears no more
				return
			}
			w.Write([]byte(line))
			if err != nil {
				return
			}
		}
	}()
	drop.events = r
	errs := make([]error, len(hosts))
	var wg sync.WaitGroup
	for i, h := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.Join(context.Background(), h.peer(path, sum))
		}()
	}
	wg.Wait()
	for i, h := range hosts {
		if h == drop {
			if errs[i] == nil {
				t.Errorf("%s dropped out but its Join succeeded", h.id)
			}
			continue
		}
		if errs[i] != nil {
			t.Errorf("%s: %v", h.id, errs[i])
			continue
		}
		checkFile(t, h.dir, sum)
	}
	s := c.Stats()
	if len(s.Distrusted) != 1 || s.Distrusted[0] != "liar" {
		t.Errorf("distrusted %v, want the liar alone", s.Distrusted)
	}
	// The liar's own 20 from the controller, then about one copy for the
	// 200: the re-feeds after the faults come from peers.
	if n := s.ControllerChunks - 20; n > 2*20 {
		t.Errorf("the controller sent %d chunks for 200 hosts, more than two copies of the file", n)
	}
	t.Logf("stats: %+v", s)
}
