package master

import "sync"

// pubSequence hands out publication serials (crypt.WrapPublish) and lets
// the frames go out in serial order while they are built concurrently.
// A minion's Crypticle drops a publication whose serial is not above
// the last it took, so a frame overtaken by a later one on the publish
// socket would be lost to every minion that saw both. The zero value is
// ready to use.
type pubSequence struct {
	mu   sync.Mutex
	cond *sync.Cond
	last int64 // the serial handed out last
	done int64 // the serial whose turn passed last
}

// next is a new serial; its holder must call inTurn with it exactly
// once, or every later publication waits forever.
func (q *pubSequence) next() int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.last++
	return q.last
}

// inTurn waits until every earlier serial's turn has passed, runs send
// (alone: only one serial is in turn at a time), and passes the turn on.
func (q *pubSequence) inTurn(serial int64, send func()) {
	q.mu.Lock()
	if q.cond == nil {
		q.cond = sync.NewCond(&q.mu)
	}
	for q.done != serial-1 {
		q.cond.Wait()
	}
	q.mu.Unlock()
	send()
	q.mu.Lock()
	q.done = serial
	q.cond.Broadcast()
	q.mu.Unlock()
}
