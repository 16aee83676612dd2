package main

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// roundTrip times POST / {"client": "local", "tgt": "*", "fun":
// "test.ping"} reps times in a row and checks every minion answered.
func roundTrip(ctx context.Context, a *api, minions, reps int) (*samples, error) {
	s := &samples{}
	for range reps {
		t0 := time.Now()
		ret, err := a.run(ctx, lowstate{"client": "local", "tgt": "*", "fun": "test.ping"})
		if err == nil && len(ret) != minions {
			err = fmt.Errorf("local test.ping: %d of %d minions answered", len(ret), minions)
		}
		s.add(time.Since(t0), err)
		if err != nil {
			return s, err
		}
	}
	return s, nil
}

// asyncResult is a closed-loop run of local_async + GET /jobs/<jid>.
type asyncResult struct {
	all, post, get *samples
	elapsed        time.Duration
	clientCPU      time.Duration
}

// rate is requests per second over the run.
func (r asyncResult) rate() float64 {
	return float64(r.all.count()) / r.elapsed.Seconds()
}

// asyncLoad runs conc clients for dur, each in a loop posting a
// local_async test.ping to one minion (the next in turn, so every
// minion works and no job waits on 100 returns) and then, with getJobs,
// GETting /jobs/<jid>: two requests per round, both timed.
func asyncLoad(ctx context.Context, a *api, ids []string, conc int, dur time.Duration, getJobs bool) asyncResult {
	r := asyncResult{all: &samples{}, post: &samples{}, get: &samples{}}
	var next atomic.Int64
	deadline := time.Now().Add(dur)
	cpu0, t0 := cpuTime(), time.Now()
	var wg sync.WaitGroup
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) && ctx.Err() == nil {
				tgt := ids[int(next.Add(1))%len(ids)]
				t := time.Now()
				jid, err := a.localAsync(ctx, tgt, "test.ping")
				d := time.Since(t)
				r.post.add(d, err)
				r.all.add(d, err)
				if err != nil || !getJobs {
					continue
				}
				t = time.Now()
				err = a.do(ctx, "GET", "/jobs/"+jid, nil, nil)
				d = time.Since(t)
				r.get.add(d, err)
				r.all.add(d, err)
			}
		}()
	}
	wg.Wait()
	r.elapsed, r.clientCPU = time.Since(t0), cpuTime()-cpu0
	return r
}

// loginLoad posts /login conc at a time until n logins were made.
func loginLoad(ctx context.Context, base, user, pass, eauth string, conc, n int) (*samples, time.Duration) {
	s := &samples{}
	var left atomic.Int64
	left.Store(int64(n))
	t0 := time.Now()
	var wg sync.WaitGroup
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := newAPI(base, 1)
			for left.Add(-1) >= 0 && ctx.Err() == nil {
				t := time.Now()
				_, err := a.login(ctx, user, pass, eauth)
				s.add(time.Since(t), err)
			}
		}()
	}
	wg.Wait()
	return s, time.Since(t0)
}

// jobsWhile runs jobs local test.ping '*' round trips in a row, as
// roundTrip does, returning the jids with their start times so event
// delivery can be timed against them.
func jobsWhile(ctx context.Context, a *api, minions, jobs int) (*samples, map[string]time.Time, error) {
	s := &samples{}
	starts := map[string]time.Time{}
	for range jobs {
		t0 := time.Now()
		ret, err := a.run(ctx, lowstate{"client": "local", "tgt": "*", "fun": "test.ping", "full_return": true})
		if err == nil && len(ret) != minions {
			err = fmt.Errorf("local test.ping: %d of %d minions answered", len(ret), minions)
		}
		s.add(time.Since(t0), err)
		if err != nil {
			return s, starts, err
		}
		if jid := anyJID(ret); jid != "" {
			starts[jid] = t0
		}
	}
	return s, starts, nil
}

// anyJID reads the jid out of a full_return answer {"<id>": {"jid": …}}.
func anyJID(ret map[string]json.RawMessage) string {
	for _, v := range ret {
		var r struct {
			JID string `json:"jid"`
		}
		if json.Unmarshal(v, &r) == nil && r.JID != "" {
			return r.JID
		}
	}
	return ""
}
