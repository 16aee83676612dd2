package minion

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/brinesalt/brine/internal/crypt"
	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
)

// maxMemReturns bounds the returns a minion keeps in memory for one
// master. Past it, returns go to disk (cachedir/return_queue/<master>)
// or, for a minion without a disk (the swarm), the job waits for room:
// a return is never dropped.
const maxMemReturns = 1000

// returnQueue holds the returns not yet delivered to one master, in
// the order they were produced. Salt keeps them in memory only
// (_return_pub retries inside the job's thread) and loses them when the
// minion stops; Brine keeps up to maxMemReturns in memory, spills the
// rest to files in dir, and writes what is in memory to dir when the
// minion stops, so a master that is down for long gets every return
// once it is back, even across a minion restart.
//
// Invariant: every file in dir is newer than every return in memory,
// except for the files persist writes, which are older and sort first.
type returnQueue struct {
	mu     sync.Mutex
	mem    []queued
	disk   []uint64 // sequence numbers of the files in dir, oldest first
	head   *queued  // disk[0] read into memory
	dir    string   // "" keeps everything in memory
	seq    uint64
	max    int
	log    *slog.Logger
	wake   chan struct{} // a return was queued
	room   chan struct{} // a return was delivered
	loaded bool
}

type queued struct {
	seq  uint64
	load *ordered.Map
}

func newReturnQueue(dir string, log *slog.Logger) *returnQueue {
	return &returnQueue{dir: dir, max: maxMemReturns, log: log, wake: make(chan struct{}, 1), room: make(chan struct{}, 1)}
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// restore reads the returns a previous run left in dir.
func (q *returnQueue) restore() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.loaded || q.dir == "" {
		return
	}
	q.loaded = true
	ents, err := os.ReadDir(q.dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		n, ok := strings.CutSuffix(e.Name(), ".p")
		if !ok {
			continue
		}
		s, err := strconv.ParseUint(n, 10, 64)
		if err != nil {
			continue
		}
		q.disk = append(q.disk, s)
		q.seq = max(q.seq, s)
	}
	slices.Sort(q.disk)
	if len(q.disk) > 0 {
		q.log.Info("returns left from an earlier run will be delivered", "count", len(q.disk), "dir", q.dir)
		signal(q.wake)
	}
}

func (q *returnQueue) path(seq uint64) string {
	return filepath.Join(q.dir, fmt.Sprintf("%020d.p", seq))
}

// push queues a return. With no disk and a full queue it waits for
// room until ctx ends; then the return is kept anyway (the queue grows
// past its bound rather than lose it).
func (q *returnQueue) push(ctx context.Context, load *ordered.Map) {
	for {
		q.mu.Lock()
		full := len(q.mem) >= q.max
		if q.dir == "" && full && ctx.Err() == nil {
			q.mu.Unlock()
			select {
			case <-q.room:
			case <-ctx.Done():
			}
			continue
		}
		q.seq++
		it := queued{seq: q.seq, load: load}
		if q.dir != "" && (full || len(q.disk) > 0) {
			if err := q.write(it); err == nil {
				q.disk = append(q.disk, it.seq)
				q.mu.Unlock()
				signal(q.wake)
				return
			} else {
				q.log.Warn("return not spilled to disk, kept in memory", logattr.Err, err)
			}
		}
		q.mem = append(q.mem, it)
		q.mu.Unlock()
		signal(q.wake)
		return
	}
}

func (q *returnQueue) write(it queued) error {
	b, err := protocol.Marshal(it.load)
	if err != nil {
		return fmt.Errorf("spill return: %w", err)
	}
	if err := os.MkdirAll(q.dir, 0o700); err != nil {
		return fmt.Errorf("spill return: %w", err)
	}
	return crypt.WriteFileAtomic(q.path(it.seq), b, 0o600)
}

// peek returns the oldest undelivered return, nil when there is none.
func (q *returnQueue) peek() *ordered.Map {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.mem) > 0 && (len(q.disk) == 0 || q.mem[0].seq < q.disk[0]) {
		return q.mem[0].load
	}
	for len(q.disk) > 0 {
		if q.head != nil && q.head.seq == q.disk[0] {
			return q.head.load
		}
		p := q.path(q.disk[0])
		b, err := os.ReadFile(p)
		var v any
		if err == nil {
			v, err = protocol.Unmarshal(b)
		}
		if load, ok := v.(*ordered.Map); err == nil && ok {
			q.head = &queued{seq: q.disk[0], load: load}
			return load
		}
		// Not a return: set it aside, named, rather than retry it forever.
		q.log.Error("unreadable queued return set aside", "file", p, logattr.Err, err)
		_ = os.Rename(p, p+".bad")
		q.disk = q.disk[1:]
	}
	return nil
}

// pop drops the return peek gave, once the master has it.
func (q *returnQueue) pop() {
	q.mu.Lock()
	if len(q.mem) > 0 && (len(q.disk) == 0 || q.mem[0].seq < q.disk[0]) {
		q.mem[0] = queued{}
		q.mem = q.mem[1:]
	} else if len(q.disk) > 0 {
		if err := os.Remove(q.path(q.disk[0])); err != nil && !os.IsNotExist(err) {
			q.log.Warn("delivered return not removed from disk", logattr.Err, err)
		}
		q.disk, q.head = q.disk[1:], nil
	}
	q.mu.Unlock()
	signal(q.room)
}

// len is the number of undelivered returns.
func (q *returnQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.mem) + len(q.disk)
}

// persist writes the returns still in memory to dir when the minion
// stops, so the next run delivers them.
func (q *returnQueue) persist() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.dir == "" || len(q.mem) == 0 {
		return
	}
	for _, it := range q.mem {
		if err := q.write(it); err != nil {
			q.log.Error("undelivered return lost at shutdown", logattr.JID, it.load.Value("jid"), logattr.Err, err)
			continue
		}
		q.disk = append(q.disk, it.seq)
	}
	q.log.Info("undelivered returns kept on disk for the next run", "count", len(q.mem), "dir", q.dir)
	q.mem = nil
	slices.Sort(q.disk)
}
