package main

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

// batchSize is salt.cli.batch.get_bnum: N, or N% of the minions
// (rounded down, at least 1).
func batchSize(spec string, total int) (int, error) {
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

// runBatch is salt/cli/batch.py: find the minions that answer
// test.ping, then keep at most batch-size of them running the job,
// starting the next one batch-wait seconds after one returns. Each
// sub-job is a list-targeted publication. The exit code is the highest
// retcode returned (salt/cli/salt.py _run_batch). --static runs the
// same way, quietly, over 100% of the minions unless -b says otherwise,
// and prints every return as one document at the end.
func (c *cli) runBatch(ctx context.Context, req master.PublishRequest) int {
	s, err := c.connect(ctx)
	if err != nil {
		fmt.Fprintln(c.stderr, err)
		return 1
	}
	defer s.close()
	ping := req
	ping.Fun, ping.Arg = "test.ping", nil
	pjid, expected, err := s.pub.Publish(ctx, ping)
	if err != nil {
		fmt.Fprintln(c.stderr, "Error:", err)
		return 1
	}
	up := c.waitPings(ctx, s, pjid, expected)
	if !c.o.static {
		for _, id := range expected {
			if !slices.Contains(up, id) {
				fmt.Fprintf(c.stdout, "Minion %s did not respond. No job will be sent.\n", id)
			}
		}
	}
	b := &batch{c: c, s: s, req: req, queue: up, active: map[string]string{}}
	if c.o.static {
		b.static = ordered.New()
	} else if len(up) == 0 {
		fmt.Fprintln(c.stderr, "No minions matched the target.")
		return 2
	}
	spec := c.o.batch
	if spec == "" {
		spec = "100%"
	}
	if b.n, err = batchSize(spec, len(up)); err != nil {
		fmt.Fprintln(c.stderr, err)
		return 2
	}
	code := b.run(ctx)
	if b.static != nil {
		return c.finishStatic(b.static)
	}
	return code
}

// finishStatic is the --static end of salt/cli/salt.py _run_batch: one
// document of every return, then exit 0 whatever the minions returned
// (Salt passes no retcode there), or 2 with "ERROR: No return received"
// when nothing came back (_output_ret).
func (c *cli) finishStatic(all *ordered.Map) int {
	c.display(all, "", 0)
	if all.Len() == 0 {
		fmt.Fprintln(c.stderr, "ERROR: No return received")
		return 2
	}
	return 0
}

// batch is one run of salt/cli/batch.py Batch.run.
type batch struct {
	c      *cli
	s      *session
	req    master.PublishRequest
	n      int
	queue  []string
	active map[string]string // jid -> minion
	ready  []time.Time       // when a slot frees up (batch-wait)
	code   int
	// static collects {minion: return} for --static instead of printing.
	static *ordered.Map
}

// failhard is --failhard or failhard: True in the master config, which
// Batch.run reads from the merged opts.
func (b *batch) failhard() bool {
	on, _ := b.c.cfg.Value("failhard").(bool)
	return b.c.o.failhard || on
}

func (b *batch) start(ctx context.Context, ids []string) bool {
	if len(ids) == 0 {
		return true
	}
	if b.static == nil {
		fmt.Fprintf(b.c.stdout, "\nExecuting run on %s\n\n", pyList(ids))
	}
	for _, id := range ids {
		sub := b.req
		sub.Tgt, sub.TgtType = []any{id}, "list"
		jid, _, err := b.s.pub.Publish(ctx, sub)
		if err != nil {
			fmt.Fprintln(b.c.stderr, "Error:", err)
			return false
		}
		b.active[jid] = id
	}
	return true
}

// run drives the sliding window until every minion returned or timed
// out, or --failhard stopped it; it returns the highest retcode.
func (b *batch) run(ctx context.Context) int {
	first := min(b.n, len(b.queue))
	if !b.start(ctx, b.queue[:first]) {
		return 1
	}
	b.queue = b.queue[first:]
	lastNews := time.Now()
	for len(b.active) > 0 || len(b.queue) > 0 {
		now := time.Now()
		var launch []string
		for len(b.ready) > 0 && !b.ready[0].After(now) && len(b.queue) > 0 && len(b.active)+len(launch) < b.n {
			launch = append(launch, b.queue[0])
			b.queue, b.ready = b.queue[1:], b.ready[1:]
		}
		if !b.start(ctx, launch) {
			return 1
		}
		if len(b.active) == 0 && len(b.queue) > 0 && len(b.ready) == 0 {
			b.ready = append(b.ready, now)
			continue
		}
		t := time.NewTimer(200 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return 1
		case ev, ok := <-b.s.events:
			t.Stop()
			if !ok {
				return 1
			}
			jid, id, ok := retTag(ev.Tag)
			if !ok || b.active[jid] != id {
				continue
			}
			delete(b.active, jid)
			lastNews = time.Now()
			if b.returned(id, ev.Data) {
				return b.code
			}
		case <-t.C:
			if len(b.active) > 0 && time.Since(lastNews) > b.c.mo.Timeout+b.c.mo.GatherJobTimeout {
				b.timedOut()
			}
		}
	}
	return b.code
}

// returned records one minion's return and reports whether --failhard
// stops the run: Batch.run logs and returns at the first retcode > 0.
func (b *batch) returned(id string, data *ordered.Map) bool {
	rc, _ := protocol.AsInt(data.Value("retcode"))
	b.code = max(b.code, rc)
	if b.static != nil {
		b.static.Set(id, data.Value("return"))
	} else {
		b.c.printReturn(id, data)
	}
	b.ready = append(b.ready, time.Now().Add(time.Duration(b.c.o.batchWait*float64(time.Second))))
	if rc > 0 && b.failhard() {
		b.c.log.Error("Minion returned with non-zero exit code. Batch run stopped due to failhard", "minion", id)
		return true
	}
	return false
}

// timedOut gives up on the active minions. salt/cli/batch.py records a
// minion whose iterator ended without its return as an empty return
// with retcode 0 and displays it like any other: Salt's batches do not
// fail for a silent minion, and Brine matches that.
func (b *batch) timedOut() {
	var ids []string
	for _, id := range b.active {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if b.static != nil {
			b.static.Set(id, ordered.New())
		} else {
			b.c.display(ordered.FromPairs(id, ordered.New()), "", 0)
		}
		b.ready = append(b.ready, time.Now())
	}
	b.active = map[string]string{}
}

func retTag(tag string) (jid, id string, ok bool) {
	rest, ok := strings.CutPrefix(tag, "salt/job/")
	if !ok {
		return "", "", false
	}
	jid, id, ok = strings.Cut(rest, "/ret/")
	return jid, id, ok
}

// waitPings collects test.ping answers until all expected minions
// answered or gather_job_timeout passed.
func (c *cli) waitPings(ctx context.Context, s *session, jid string, expected []string) []string {
	var up []string
	t := time.NewTimer(c.mo.GatherJobTimeout)
	defer t.Stop()
	for len(up) < len(expected) {
		select {
		case <-ctx.Done():
			return up
		case <-t.C:
			slices.Sort(up)
			return up
		case ev, ok := <-s.events:
			if !ok {
				return up
			}
			if j, id, ok := retTag(ev.Tag); ok && j == jid && !slices.Contains(up, id) {
				up = append(up, id)
			}
		}
	}
	slices.Sort(up)
	return up
}

func pyList(ids []string) string {
	q := make([]string, len(ids))
	for i, id := range ids {
		q[i] = "'" + id + "'"
	}
	return "[" + strings.Join(q, ", ") + "]"
}
