package orchestrate

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/states"
	"github.com/brinesalt/brine/state/target"
)

// waitForEvent is salt.wait_for_event: watch the master's bus for
// events whose tag matches name (a glob) until every id in id_list was
// seen in the event data's event_id key (or in its data sub-mapping),
// or timeout seconds passed.
func (r *run) waitForEvent(ctx context.Context, c *states.Call) (*states.Result, error) {
	res := states.NewResult(c.Arg("name"), states.False, "")
	if stateTest(c) {
		res.Result, res.Comment = states.None, fmt.Sprintf("Orchestration would wait for event '%s'", c.Str("name"))
		return res, nil
	}
	if node := c.Str("node"); node != "master" {
		res.Comment = fmt.Sprintf("wait_for_event: node %q is not supported on a Brine master; only master", node)
		return res, nil
	}
	timeout, err := number(c.Arg("timeout"))
	if err != nil {
		res.Comment = "timeout: " + err.Error()
		return res, nil
	}
	ids := idList(c.Arg("id_list"))
	match, err := target.Compile(c.Str("name"), target.Glob, target.Options{})
	if err != nil {
		res.Comment = err.Error()
		return res, nil
	}
	ch, cancel := r.m.Bus().Subscribe()
	defer cancel()
	start := time.Now()
	deadline := time.NewTimer(time.Duration(timeout * float64(time.Second)))
	defer deadline.Stop()
	eventID := c.Str("event_id")
	var seen []any
	for len(ids) > 0 {
		select {
		case <-ctx.Done():
			res.Comment = "Timeout value reached."
			return withSeen(res, seen), nil
		case <-deadline.C:
			res.Comment = "Timeout value reached."
			return withSeen(res, seen), nil
		case ev := <-ch:
			if !match.Match(&target.Minion{ID: ev.Tag}) {
				continue
			}
			val := ev.Data.Value(eventID)
			if val == nil {
				if d, ok := ev.Data.Value("data").(*ordered.Map); ok {
					val = d.Value(eventID)
				}
			}
			var found []string
			if l, ok := val.([]any); ok {
				for _, id := range ids {
					if slices.ContainsFunc(l, func(x any) bool { return ordered.KeyString(x) == id }) {
						found = append(found, id)
					}
				}
			} else if val != nil && slices.Contains(ids, ordered.KeyString(val)) {
				found = append(found, ordered.KeyString(val))
			}
			for _, f := range found {
				ids = slices.DeleteFunc(ids, func(s string) bool { return s == f })
				seen = append(seen, f)
			}
		}
	}
	res.Result = states.True
	res.Comment = fmt.Sprintf("All events seen in %v seconds.", time.Since(start).Seconds())
	return withSeen(res, seen), nil
}

func withSeen(res *states.Result, seen []any) *states.Result {
	if len(seen) > 0 {
		res.Changes = ordered.FromPairs("minions_seen", seen)
	}
	return res
}

func idList(v any) []string {
	var out []string
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			out = append(out, ordered.KeyString(e))
		}
	case nil:
	default:
		out = append(out, ordered.KeyString(x))
	}
	return out
}
