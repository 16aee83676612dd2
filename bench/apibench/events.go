package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// subscriber is one GET /events stream. A reading subscriber records,
// per job, how many salt/job/<jid>/ret/<id> events it saw and when the
// last came; a stalled one reads the first line and then nothing, as a
// client that stopped reading would.
type subscriber struct {
	mu     sync.Mutex
	rets   map[string]*jobSeen
	closed bool // the server ended the stream
}

type jobSeen struct {
	n    int
	last time.Time
}

// subscribe opens n /events streams with the token and returns once each
// sent its first line ("retry: 400") or wait ran out; it reports how many
// are open. Streams end when ctx does.
func subscribe(ctx context.Context, base, token string, n int, stall bool, wait time.Duration) ([]*subscriber, int) {
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, DisableCompression: true}
	hc := &http.Client{Transport: tr}
	ready := make(chan bool, n)
	subs := make([]*subscriber, n)
	for i := range n {
		s := &subscriber{rets: map[string]*jobSeen{}}
		subs[i] = s
		go s.run(ctx, hc, base, token, stall, ready)
	}
	open := 0
	timeout := time.After(wait)
	for range n {
		select {
		case ok := <-ready:
			if ok {
				open++
			}
		case <-timeout:
			return subs, open
		}
	}
	return subs, open
}

func (s *subscriber) run(ctx context.Context, hc *http.Client, base, token string, stall bool, ready chan<- bool) {
	req, err := http.NewRequestWithContext(ctx, "GET", base+"/events", nil)
	if err != nil {
		ready <- false
		return
	}
	req.Header.Set("X-Auth-Token", token)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := hc.Do(req)
	if err != nil {
		ready <- false
		return
	}
	defer resp.Body.Close()
	br := bufio.NewReaderSize(resp.Body, 64<<10)
	first, err := br.ReadSlice('\n')
	ok := err == nil && resp.StatusCode == 200 && bytes.HasPrefix(first, []byte("retry:"))
	ready <- ok
	if !ok {
		return
	}
	if stall {
		<-ctx.Done()
		return
	}
	s.read(br)
	s.mu.Lock()
	s.closed = ctx.Err() == nil
	s.mu.Unlock()
}

// closedStreams counts the streams the server ended (a server may drop a
// subscriber that falls behind rather than wait for it).
func closedStreams(subs []*subscriber) int {
	n := 0
	for _, s := range subs {
		s.mu.Lock()
		if s.closed {
			n++
		}
		s.mu.Unlock()
	}
	return n
}

var retTag = []byte("tag: salt/job/")

// read counts ret events by jid until the stream ends.
func (s *subscriber) read(br *bufio.Reader) {
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			for err == bufio.ErrBufferFull {
				_, err = br.ReadSlice('\n')
			}
			continue
		}
		if err != nil {
			return
		}
		if !bytes.HasPrefix(line, retTag) {
			continue
		}
		jid, rest, ok := bytes.Cut(line[len(retTag):], []byte("/"))
		if !ok || !bytes.HasPrefix(rest, []byte("ret/")) {
			continue
		}
		now := time.Now()
		s.mu.Lock()
		js := s.rets[string(jid)]
		if js == nil {
			js = &jobSeen{}
			s.rets[string(jid)] = js
		}
		js.n++
		js.last = now
		s.mu.Unlock()
	}
}

// delivery is how the jobs' returns reached the reading subscribers:
// the time from a job's POST to its last return on each subscriber, and
// how many (subscriber, job) pairs saw every return.
func delivery(subs []*subscriber, starts map[string]time.Time, minions int) (*samples, int, int) {
	s := &samples{}
	complete, pairs := 0, 0
	for _, sub := range subs {
		sub.mu.Lock()
		for jid, t0 := range starts {
			pairs++
			js := sub.rets[jid]
			if js == nil || js.n < minions {
				continue
			}
			complete++
			s.add(js.last.Sub(t0), nil)
		}
		sub.mu.Unlock()
	}
	return s, complete, pairs
}

// awaitDelivery waits up to limit for every return to reach every
// reading stream (a server may deliver events well after the jobs end),
// then reports delivery.
func awaitDelivery(subs []*subscriber, starts map[string]time.Time, minions int, limit time.Duration) (*samples, int, int) {
	deadline := time.Now().Add(limit)
	for {
		d, complete, pairs := delivery(subs, starts, minions)
		if complete == pairs || time.Now().After(deadline) {
			return d, complete, pairs
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// eventsRun measures jobs round trips with n subscribers (reading or
// stalled) open, and how the reading ones received the returns.
func eventsRun(ctx context.Context, a *api, minions, n, jobs int, stall bool) (string, *samples, error) {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	subs, open := subscribe(sctx, a.base, a.token, n, stall, time.Minute)
	rt, starts, err := jobsWhile(ctx, a, minions, jobs)
	if err != nil {
		return "", rt, err
	}
	kind := "reading"
	if stall {
		kind = "stalled"
	}
	line := fmt.Sprintf("%d %s subscribers (%d open)", n, kind, open)
	if !stall && n > 0 {
		d, complete, pairs := awaitDelivery(subs, starts, minions, 30*time.Second)
		line += fmt.Sprintf(", every return seen on %d of %d (subscriber, job) pairs, %d streams ended by the server, POST → last return on the stream p50 %s ms p99 %s ms",
			complete, pairs, closedStreams(subs), ms(d.quantile(0.5)), ms(d.quantile(0.99)))
	}
	return line, rt, nil
}
