package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// slowestShown is how many of the longest-running hosts the status line
// names.
const slowestShown = 3

// progress keeps one live status line on a terminal's stderr while hosts
// run: done, failed, running and queued counts, the elapsed time and the
// hosts that have been running longest ("slowest: host17 12.3s, …"). It
// clears the line before anything else is printed so output never
// interleaves. Salt's salt-ssh has no such line (it prints returns only);
// at a thousand hosts the counts and the stragglers are what one watches.
//
// Every update costs O(1) amortised whatever the number of hosts: hosts
// in flight sit in a queue in the order they started, so the oldest ones
// still running are at its head once the finished ones are popped off.
type progress struct {
	w     io.Writer
	total int
	start time.Time
	now   func() time.Time

	mu           sync.Mutex
	done, failed int
	started      map[string]time.Time // hosts in flight
	order        []string             // IDs in the order they started; finished ones are skipped lazily
	shown        bool
	stop         chan struct{}
	wg           sync.WaitGroup
}

func newProgress(w io.Writer, total int) *progress {
	p := &progress{w: w, total: total, now: time.Now, started: map[string]time.Time{}, stop: make(chan struct{})}
	p.start = p.now()
	p.wg.Add(1)
	go p.loop()
	return p
}

func (p *progress) loop() {
	defer p.wg.Done()
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.mu.Lock()
			p.draw()
			p.mu.Unlock()
		}
	}
}

// line renders the status; callers hold mu.
func (p *progress) line() string {
	now := p.now()
	running := len(p.started)
	s := fmt.Sprintf("%d/%d done, %d failed, %d running, %d queued, %.1fs",
		p.done, p.total, p.failed, running, p.total-p.done-running, now.Sub(p.start).Seconds())
	if slow := p.slowest(now); slow != "" {
		s += "; slowest: " + slow
	}
	return s
}

// slowest names the hosts running longest, dropping finished hosts from
// the head of the start-order queue; callers hold mu.
func (p *progress) slowest(now time.Time) string {
	for len(p.order) > 0 {
		if _, ok := p.started[p.order[0]]; ok {
			break
		}
		p.order = p.order[1:]
	}
	var parts []string
	for _, id := range p.order {
		if len(parts) == slowestShown {
			break
		}
		if at, ok := p.started[id]; ok {
			parts = append(parts, fmt.Sprintf("%s %.1fs", id, now.Sub(at).Seconds()))
		}
	}
	return strings.Join(parts, ", ")
}

func (p *progress) draw() {
	fmt.Fprintf(p.w, "\r\x1b[K%s", p.line())
	p.shown = true
}

// clear removes the status line; callers hold mu.
func (p *progress) clear() {
	if p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.shown = false
	}
}

// hostStarted records that work on host id began.
func (p *progress) hostStarted(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.started[id] = p.now()
	p.order = append(p.order, id)
}

// host records one finished host and runs print with the line cleared.
func (p *progress) host(id string, failed bool, print func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	if failed {
		p.failed++
	}
	delete(p.started, id)
	p.clear()
	print()
	p.draw()
}

// close stops the ticker and removes the line.
func (p *progress) close() {
	close(p.stop)
	p.wg.Wait()
	p.mu.Lock()
	p.clear()
	p.mu.Unlock()
}
