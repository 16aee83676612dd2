package client

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
	"github.com/brinesalt/brine/master"
)

// BatchSize is salt.cli.batch.get_bnum: N, or N% of the minions
// (rounded down, at least 1).
func BatchSize(spec string, total int) (int, error) {
	if p, ok := strings.CutSuffix(spec, "%"); ok {
		f, err := strconv.ParseFloat(p, 64)
		if err != nil || f <= 0 {
			return 0, fmt.Errorf("invalid batch size %q", spec)
		}
		return max(1, int(math.Floor(f/100*float64(total)))), nil
	}
	n, err := strconv.Atoi(spec)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("invalid batch size %q", spec)
	}
	return n, nil
}

// Ping is the first step of salt/cli/batch.py Batch.gather_minions:
// publish test.ping to req's target and collect the minions that answer
// within GatherJobTimeout. It returns them sorted, and the minions the
// master expected.
func (s *Session) Ping(ctx context.Context, req master.PublishRequest) (up, expected []string, err error) {
	ping := req
	ping.Fun, ping.Arg = "test.ping", nil
	jid, expected, err := s.Pub.Publish(ctx, ping)
	if err != nil {
		return nil, nil, err
	}
	if s.OrderMasters(ctx) {
		// The lower tiers' minions are not in expected: collect as
		// salt does, through the syndics' reports (client/syndic.go).
		_, _, err := s.Collect(ctx, jid, expected, ping, func(id string, _ *ordered.Map) { up = append(up, id) })
		slices.Sort(up)
		return up, expected, err
	}
	return s.waitPings(ctx, jid, expected), expected, nil
}

// waitPings collects test.ping answers until all expected minions
// answered or GatherJobTimeout passed.
func (s *Session) waitPings(ctx context.Context, jid string, expected []string) []string {
	var up []string
	t := time.NewTimer(s.GatherJobTimeout)
	defer t.Stop()
	for len(up) < len(expected) {
		select {
		case <-ctx.Done():
			return up
		case <-t.C:
			slices.Sort(up)
			return up
		case ev, ok := <-s.Events:
			if !ok {
				return up
			}
			if j, id, ok := RetTag(ev.Tag); ok && j == jid && !slices.Contains(up, id) {
				up = append(up, id)
			}
		}
	}
	slices.Sort(up)
	return up
}

// Batch is one run of salt/cli/batch.py Batch.run over minions that
// answered the ping: at most N of them run the job at a time, the next
// starting Wait after one returns; each sub-job is a list-targeted
// publication of Req.
type Batch struct {
	S   *Session
	Req master.PublishRequest
	N   int
	// Wait is --batch-wait: how long a freed slot stays empty.
	Wait time.Duration
	// Failhard stops the run at the first return with a retcode > 0.
	Failhard bool
	// OnStart is told of the minions a round starts on.
	OnStart func(ids []string)
	// OnReturn sees each minion's return event data.
	OnReturn ReturnFunc
	// OnTimeout is told of minions given up on, sorted: Batch.run
	// records them as an empty return with retcode 0.
	OnTimeout func(id string)
	// OnFailhard is told of the minion whose retcode stopped the run.
	OnFailhard func(id string)

	queue  []string
	active map[string]string // jid -> minion
	ready  []time.Time       // when a slot frees up (batch-wait)
	code   int
}

// Run drives the sliding window over the minions in up until every one
// returned or timed out, or Failhard stopped it. It returns the highest
// retcode; an error means a publish failed, the event stream closed or
// ctx ended, and the run is incomplete.
func (b *Batch) Run(ctx context.Context, up []string) (int, error) {
	b.queue, b.active = slices.Clone(up), map[string]string{}
	first := min(b.N, len(b.queue))
	if err := b.start(ctx, b.queue[:first]); err != nil {
		return 1, err
	}
	b.queue = b.queue[first:]
	lastNews := time.Now()
	for len(b.active) > 0 || len(b.queue) > 0 {
		if err := b.launchReady(ctx); err != nil {
			return 1, err
		}
		if len(b.active) == 0 && len(b.queue) > 0 && len(b.ready) == 0 {
			b.ready = append(b.ready, time.Now())
			continue
		}
		t := time.NewTimer(200 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return 1, ctx.Err()
		case ev, ok := <-b.S.Events:
			t.Stop()
			if !ok {
				return 1, ErrMasterLost
			}
			jid, id, ok := RetTag(ev.Tag)
			if !ok || b.active[jid] != id {
				continue
			}
			delete(b.active, jid)
			lastNews = time.Now()
			if b.returned(id, ev.Data) {
				return b.code, nil
			}
		case <-t.C:
			if len(b.active) > 0 && time.Since(lastNews) > b.S.Timeout+b.S.GatherJobTimeout {
				b.TimedOut()
			}
		}
	}
	return b.code, nil
}

// launchReady starts queued minions on the slots whose batch-wait has
// passed.
func (b *Batch) launchReady(ctx context.Context) error {
	now := time.Now()
	var launch []string
	for len(b.ready) > 0 && !b.ready[0].After(now) && len(b.queue) > 0 && len(b.active)+len(launch) < b.N {
		launch = append(launch, b.queue[0])
		b.queue, b.ready = b.queue[1:], b.ready[1:]
	}
	return b.start(ctx, launch)
}

func (b *Batch) start(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	if b.OnStart != nil {
		b.OnStart(ids)
	}
	for _, id := range ids {
		sub := b.Req
		sub.Tgt, sub.TgtType = []any{id}, "list"
		jid, _, err := b.S.Pub.Publish(ctx, sub)
		if err != nil {
			return err
		}
		b.active[jid] = id
	}
	return nil
}

// returned records one minion's return and reports whether Failhard
// stops the run: Batch.run logs and returns at the first retcode > 0.
func (b *Batch) returned(id string, data *ordered.Map) bool {
	rc, _ := protocol.AsInt(data.Value("retcode"))
	b.code = max(b.code, rc)
	b.OnReturn(id, data)
	b.ready = append(b.ready, time.Now().Add(b.Wait))
	if rc > 0 && b.Failhard {
		if b.OnFailhard != nil {
			b.OnFailhard(id)
		}
		return true
	}
	return false
}

// TimedOut gives up on the active minions. salt/cli/batch.py records a
// minion whose iterator ended without its return as an empty return
// with retcode 0 and displays it like any other: Salt's batches do not
// fail for a silent minion, and Brine matches that.
func (b *Batch) TimedOut() {
	var ids []string
	for _, id := range b.active {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		b.OnTimeout(id)
		b.ready = append(b.ready, time.Now())
	}
	b.active = map[string]string{}
}

// RetTag splits a job return tag, salt/job/<jid>/ret/<id>.
func RetTag(tag string) (jid, id string, ok bool) {
	rest, ok := strings.CutPrefix(tag, "salt/job/")
	if !ok {
		return "", "", false
	}
	jid, id, ok = strings.Cut(rest, "/ret/")
	return jid, id, ok
}
