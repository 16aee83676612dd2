package main

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

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
// sub-job is a list-targeted publication.
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
	if len(up) == 0 {
		fmt.Fprintln(c.stderr, "No minions matched the target.")
		return 2
	}
	n, err := batchSize(c.o.batch, len(up))
	if err != nil {
		fmt.Fprintln(c.stderr, err)
		return 2
	}
	queue := append([]string(nil), up...)
	active := map[string]string{} // jid -> minion
	var ready []time.Time         // when a slot frees up (batch-wait)
	code := 0
	start := func(ids []string) bool {
		if len(ids) == 0 {
			return true
		}
		fmt.Fprintf(c.stdout, "\nExecuting run on %s\n\n", pyList(ids))
		for _, id := range ids {
			sub := req
			sub.Tgt, sub.TgtType = []any{id}, "list"
			jid, _, err := s.pub.Publish(ctx, sub)
			if err != nil {
				fmt.Fprintln(c.stderr, "Error:", err)
				return false
			}
			active[jid] = id
		}
		return true
	}
	first := min(n, len(queue))
	if !start(queue[:first]) {
		return 1
	}
	queue = queue[first:]
	lastNews := time.Now()
	for len(active) > 0 || len(queue) > 0 {
		now := time.Now()
		var launch []string
		for len(ready) > 0 && !ready[0].After(now) && len(queue) > 0 && len(active)+len(launch) < n {
			launch = append(launch, queue[0])
			queue, ready = queue[1:], ready[1:]
		}
		if !start(launch) {
			return 1
		}
		if len(active) == 0 && len(queue) > 0 && len(ready) == 0 {
			ready = append(ready, now)
			continue
		}
		wait := 200 * time.Millisecond
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return 1
		case ev, ok := <-s.events:
			t.Stop()
			if !ok {
				return 1
			}
			jid, id, ok := retTag(ev.Tag)
			if !ok || active[jid] != id {
				continue
			}
			delete(active, jid)
			lastNews = time.Now()
			if rc, _ := protocol.AsInt(ev.Data.Value("retcode")); rc != 0 {
				code = 1
			}
			c.printReturn(id, ev.Data)
			ready = append(ready, time.Now().Add(time.Duration(c.o.batchWait*float64(time.Second))))
		case <-t.C:
			if len(active) > 0 && time.Since(lastNews) > c.mo.Timeout+c.mo.GatherJobTimeout {
				var ids []string
				for _, id := range active {
					ids = append(ids, id)
				}
				slices.Sort(ids)
				for _, id := range ids {
					fmt.Fprintf(c.stdout, "%s:\n    Minion did not return. [No response]\n", id)
				}
				active = map[string]string{}
				code = 1
				for range ids {
					ready = append(ready, time.Now())
				}
			}
		}
	}
	return code
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
