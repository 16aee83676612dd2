package master

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/jobcache"
	"github.com/brinesalt/brine/internal/ordered"
)

// Runner runs one of the master-side runner functions salt-run offers
// (salt/runners/jobs.py, salt/runners/manage.py, salt/runners/cache.py).
func (m *Master) Runner(ctx context.Context, fun string, args []any, kw *ordered.Map) (any, error) {
	switch fun {
	case "jobs.lookup_jid", "jobs.list_jobs", "jobs.list_job", "jobs.print_job", "jobs.exit_success", "jobs.last_run":
		return m.jobsRunner(ctx, fun, args, kw)
	case "reactor.list", "reactor.add", "reactor.delete", "reactor.is_leader", "reactor.set_leader":
		return m.reactorRunner(fun, args, kw)
	case "event.send":
		return m.eventSend(args, kw)
	case "jobs.active":
		return m.active(ctx), nil
	case "manage.versions":
		return m.versions(ctx), nil
	case "cache.grains", "cache.pillar":
		return m.cacheRunner(fun, args, kw)
	case "manage.status", "manage.up", "manage.down", "manage.present":
		up, down := m.status(ctx)
		switch fun {
		case "manage.status":
			return ordered.FromPairs("up", up, "down", down), nil
		case "manage.down":
			return down, nil
		}
		return up, nil
	}
	if f, ok := m.o.Runners[fun]; ok {
		return f(ctx, m, args, kw)
	}
	return nil, &NoRunnerError{Fun: fun}
}

// NoRunnerError is a runner function the master does not have.
type NoRunnerError struct{ Fun string }

func (e *NoRunnerError) Error() string { return fmt.Sprintf("'%s' is not available", e.Fun) }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Gather publishes a job and collects the returns that arrive before
// timeout, ending early when every expected minion answered. On a
// master of masters the lower tiers' minions, which the syndics report,
// are expected too (Tiers).
func (m *Master) Gather(ctx context.Context, p PublishRequest, timeout time.Duration) (map[string]*ordered.Map, []string, error) {
	ch, cancel := m.bus.Subscribe()
	defer cancel()
	if p.JID == "" {
		p.JID = m.newJID(ctx)
	}
	_, minions, err := m.Publish(ctx, p)
	if err != nil {
		return nil, nil, err
	}
	tr := NewTiers(m.syndicInfo(), p.JID)
	minions = tr.Expected(minions)
	prefix := "salt/job/" + p.JID + "/ret/"
	got := map[string]*ordered.Map{}
	end := time.Now().Add(timeout)
	for {
		waiting, _ := tr.Pending(time.Now())
		if len(got) >= len(minions) && !waiting {
			return got, minions, nil
		}
		wake := end
		if waiting && tr.Deadline().Before(wake) {
			wake = tr.Deadline()
		}
		t := time.NewTimer(max(time.Until(wake), 0))
		select {
		case <-ctx.Done():
			t.Stop()
			return got, minions, nil
		case <-t.C:
			if !time.Now().Before(end) {
				return got, minions, nil
			}
		case ev := <-ch:
			t.Stop()
			if id, ok := strings.CutPrefix(ev.Tag, prefix); ok {
				got[id] = ev.Data
				if !slices.Contains(minions, id) {
					minions = append(minions, id)
				}
			} else {
				for _, id := range tr.Event(ev.Tag, ev.Data) {
					if !slices.Contains(minions, id) {
						minions = append(minions, id)
					}
				}
			}
		}
	}
}

// status is manage.status: ping every accepted minion. On a master of
// masters up lists every tier's minions that answered and down the
// others with the syndic ids, as Salt's manage.status on the top shows.
func (m *Master) status(ctx context.Context) (up, down []any) {
	got, minions, err := m.Gather(ctx, PublishRequest{Tgt: "*", TgtType: "glob", Fun: "test.ping"}, m.o.Timeout)
	if err != nil {
		return []any{}, []any{}
	}
	ids := m.Accepted()
	if m.o.OrderMasters {
		for _, id := range minions {
			if !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
		slices.Sort(ids)
	}
	up, down = []any{}, []any{}
	for _, id := range ids {
		if _, ok := got[id]; ok {
			up = append(up, id)
		} else {
			down = append(down, id)
		}
	}
	return up, down
}

// active is jobs.active: saltutil.running on every minion, grouped by
// jid.
func (m *Master) active(ctx context.Context) *ordered.Map {
	got, _, _ := m.Gather(ctx, PublishRequest{Tgt: "*", TgtType: "glob", Fun: "saltutil.running"}, m.o.Timeout)
	out := ordered.New()
	for _, id := range sortedKeys(got) {
		jobs, _ := got[id].Value("return").([]any)
		for _, j := range jobs {
			jm, ok := j.(*ordered.Map)
			if !ok {
				continue
			}
			jid, _ := jm.Value("jid").(string)
			if f, _ := jm.Value("fun").(string); f == "saltutil.running" || f == "saltutil.find_job" {
				continue
			}
			entry, ok := out.Value(jid).(*ordered.Map)
			if !ok {
				entry = ordered.FromPairs("Function", jm.Value("fun"), "Arguments", orList(toList(jm.Value("arg"))),
					"Target", jm.Value("tgt"), "Target-type", jm.Value("tgt_type"), "User", jm.Value("user"),
					"StartTime", jobcache.FormatJIDTime(jid), "Returned", []any{}, "Running", []any{})
				out.Set(jid, entry)
			}
			entry.Set("Running", append(entry.Value("Running").([]any), ordered.FromPairs(id, jm.Value("pid"))))
		}
	}
	return out
}

func toList(v any) []any {
	l, _ := v.([]any)
	return l
}
