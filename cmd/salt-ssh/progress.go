package main

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// progress keeps one live status line on a terminal's stderr while hosts
// run: done, failed and pending counts with the elapsed time. It clears
// the line before anything else is printed so output never interleaves.
type progress struct {
	w     io.Writer
	total int
	start time.Time

	mu           sync.Mutex
	done, failed int
	shown        bool
	stop         chan struct{}
	wg           sync.WaitGroup
}

func newProgress(w io.Writer, total int) *progress {
	p := &progress{w: w, total: total, start: time.Now(), stop: make(chan struct{})}
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

func (p *progress) draw() {
	fmt.Fprintf(p.w, "\r\x1b[K%d/%d done, %d failed, %d pending, %.1fs",
		p.done, p.total, p.failed, p.total-p.done, time.Since(p.start).Seconds())
	p.shown = true
}

// clear removes the status line; callers hold mu.
func (p *progress) clear() {
	if p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.shown = false
	}
}

// host records one finished host and runs print with the line cleared.
func (p *progress) host(failed bool, print func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	if failed {
		p.failed++
	}
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
