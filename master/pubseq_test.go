package master

import (
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

// TestPubSequenceSendsInSerialOrder: publications built concurrently,
// each taking a different time (as signing and scheduling do), go out
// in the order of their serials.
func TestPubSequenceSendsInSerialOrder(t *testing.T) {
	var q pubSequence
	var mu sync.Mutex
	var sent []int64
	var wg sync.WaitGroup
	for range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := q.next()
			time.Sleep(time.Duration(rand.IntN(2000)) * time.Microsecond)
			q.inTurn(s, func() {
				mu.Lock()
				sent = append(sent, s)
				mu.Unlock()
			})
		}()
	}
	wg.Wait()
	if len(sent) != 200 {
		t.Fatalf("%d sent, want 200", len(sent))
	}
	for i, s := range sent {
		if s != int64(i+1) {
			t.Fatalf("sent %v: serial %d went out at position %d", sent[:i+1], s, i)
		}
	}
}
