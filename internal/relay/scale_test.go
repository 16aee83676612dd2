package relay

import (
	"fmt"
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
