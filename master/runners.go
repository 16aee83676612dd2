package master

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/jobcache"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
)

// Runner runs one of the master-side runner functions salt-run offers
// (salt/runners/jobs.py, salt/runners/manage.py, salt/runners/cache.py).
func (m *Master) Runner(ctx context.Context, fun string, args []any, kw *ordered.Map) (any, error) {
	arg := func(i int, name string) string {
		if v, ok := kw.Get(name); ok {
			return ordered.KeyString(v)
		}
		if i < len(args) {
			return ordered.KeyString(args[i])
		}
		return ""
	}
	switch fun {
	case "jobs.lookup_jid":
		jid := arg(0, "jid")
		if jid == "" {
			return nil, fmt.Errorf("jobs.lookup_jid: a jid is required")
		}
		return m.lookupJID(jid), nil
	case "jobs.list_jobs":
		return m.listJobsFiltered(kw)
	case "jobs.list_job":
		jid := arg(0, "jid")
		if jid == "" {
			return nil, fmt.Errorf("jobs.list_job: a jid is required")
		}
		return m.listJob(jid), nil
	case "jobs.active":
		return m.active(ctx), nil
	case "jobs.print_job":
		jid := arg(0, "jid")
		if jid == "" {
			return nil, fmt.Errorf("jobs.print_job: a jid is required")
		}
		return m.printJob(jid), nil
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
	return nil, &NoRunnerError{Fun: fun}
}

// NoRunnerError is a runner function the master does not have.
type NoRunnerError struct{ Fun string }

func (e *NoRunnerError) Error() string { return fmt.Sprintf("'%s' is not available", e.Fun) }

func (m *Master) lookupJID(jid string) *ordered.Map {
	out := ordered.New()
	rets, err := m.jobs.Returns(jid)
	if err != nil {
		return out
	}
	for _, id := range sortedKeys(rets) {
		out.Set(id, rets[id].Return)
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// jobInfo is salt.utils.jid.format_job_instance.
func jobInfo(jid string, load *ordered.Map) *ordered.Map {
	args, _ := load.Value("arg").([]any)
	out := ordered.FromPairs("Function", orString(load.Value("fun"), "unknown-function"), "Arguments", orList(args),
		"Target", orValue(load.Value("tgt"), "unknown-target"), "Target-type", orString(load.Value("tgt_type"), "list"),
		"User", orString(load.Value("user"), "root"))
	if md, ok := load.Value("metadata").(*ordered.Map); ok {
		out.Set("Metadata", md)
	}
	out.Set("StartTime", jobcache.FormatJIDTime(jid))
	return out
}

// orValue is job.get(key, def) for a key whose value may be a list.
func orValue(v any, def string) any {
	if v == nil {
		return def
	}
	return v
}

func orString(v any, def string) any {
	if s, ok := v.(string); ok && s != "" {
		return s
	}
	return def
}

func (m *Master) listJobs() *ordered.Map {
	out := ordered.New()
	for _, jid := range m.jobs.JIDs() {
		load, err := m.jobs.Load(jid)
		if err != nil {
			continue
		}
		if strings.HasPrefix(ordered.KeyString(load.Value("fun")), "saltutil.find_job") {
			continue
		}
		out.Set(jid, jobInfo(jid, load))
	}
	return out
}

func (m *Master) listJob(jid string) *ordered.Map {
	out := ordered.FromPairs("jid", jid)
	load, err := m.jobs.Load(jid)
	if err != nil {
		out.Set("Error", "Cannot contact returner or no job with this jid")
		return out
	}
	jobInfo(jid, load).Range(func(k, v any) bool { out.Set(k, v); return true })
	ids := m.jobs.Minions(jid)
	l := make([]any, len(ids))
	for i, id := range ids {
		l[i] = id
	}
	out.Set("Minions", l)
	res := ordered.New()
	rets, _ := m.jobs.Returns(jid)
	for _, id := range sortedKeys(rets) {
		res.Set(id, ordered.FromPairs("return", rets[id].Return, "retcode", rets[id].Retcode, "success", rets[id].Success))
	}
	out.Set("Result", res)
	return out
}

// Gather publishes a job and collects the returns that arrive before
// timeout, ending early when every expected minion answered.
func (m *Master) Gather(ctx context.Context, p PublishRequest, timeout time.Duration) (map[string]*ordered.Map, []string, error) {
	ch, cancel := m.bus.Subscribe()
	defer cancel()
	if p.JID == "" {
		p.JID = protocol.NewJID(time.Now())
	}
	_, minions, err := m.Publish(ctx, p)
	if err != nil {
		return nil, nil, err
	}
	prefix := "salt/job/" + p.JID + "/ret/"
	got := map[string]*ordered.Map{}
	t := time.NewTimer(timeout)
	defer t.Stop()
	for len(got) < len(minions) {
		select {
		case <-ctx.Done():
			return got, minions, nil
		case <-t.C:
			return got, minions, nil
		case ev := <-ch:
			if id, ok := strings.CutPrefix(ev.Tag, prefix); ok {
				got[id] = ev.Data
			}
		}
	}
	return got, minions, nil
}

// status is manage.status: ping every accepted minion.
func (m *Master) status(ctx context.Context) (up, down []any) {
	got, _, err := m.Gather(ctx, PublishRequest{Tgt: "*", TgtType: "glob", Fun: "test.ping"}, m.o.Timeout)
	if err != nil {
		return []any{}, []any{}
	}
	up, down = []any{}, []any{}
	for _, id := range m.Accepted() {
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
