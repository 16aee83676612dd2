package netapi

import (
	"context"
	"sync/atomic"
)

// limiter maps CherryPy's thread_pool and socket_queue_size onto Go's
// server, which has a goroutine per connection rather than a pool:
// thread_pool requests are handled at once (what the pool's threads
// would be doing), up to socket_queue_size more wait for a free slot
// (the connections the listen queue would hold), and a request beyond
// both is turned away at once with a 503 instead of queuing without
// bound. /events and /ws streams do not take a slot once they stream:
// a CherryPy thread per subscriber is exactly what must not limit them.
type limiter struct {
	slots   chan struct{}
	waiting atomic.Int64
	queue   int64
}

func newLimiter(pool, queue int) *limiter {
	return &limiter{slots: make(chan struct{}, max(pool, 1)), queue: int64(max(queue, 0))}
}

// acquire takes a slot, waiting in the queue if there is room; false
// means the server is full (or ctx ended while waiting).
func (l *limiter) acquire(ctx context.Context) bool {
	select {
	case l.slots <- struct{}{}:
		return true
	default:
	}
	if l.waiting.Add(1) > l.queue {
		l.waiting.Add(-1)
		return false
	}
	defer l.waiting.Add(-1)
	select {
	case l.slots <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

func (l *limiter) release() { <-l.slots }
