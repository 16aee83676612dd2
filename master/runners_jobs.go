package master

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/jobcache"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/compile"
	"github.com/brinesalt/brine/state/modules"
)

// jobsParams are the parameters of the jobs.* runners read from the job
// cache (salt/runners/jobs.py), in Salt's order.
var jobsParams = map[string][]string{
	"jobs.lookup_jid":   {"jid", "ext_source", "returned", "missing", "display_progress"},
	"jobs.list_job":     {"jid", "ext_source", "display_progress"},
	"jobs.list_jobs":    {"ext_source", "outputter", "search_metadata", "search_function", "search_target", "start_time", "end_time", "display_progress"},
	"jobs.print_job":    {"jid", "ext_source"},
	"jobs.exit_success": {"jid", "ext_source"},
	"jobs.last_run":     {"ext_source", "outputter", "metadata", "function", "target", "display_progress"},
}

// runnerArgs binds a runner call's arguments to its parameters as
// Python does, refusing what the function does not take.
type runnerArgs map[string]any

func bindArgs(fun string, params []string, args []any, kw *ordered.Map) (runnerArgs, error) {
	if len(args) > len(params) {
		return nil, fmt.Errorf("%s() takes at most %d positional arguments but %d were given", fun, len(params), len(args))
	}
	out := runnerArgs{}
	for i, a := range args {
		out[params[i]] = a
	}
	var err error
	kw.Range(func(k, v any) bool {
		name := ordered.KeyString(k)
		if strings.HasPrefix(name, "__") {
			return true
		}
		if !slices.Contains(params, name) {
			err = fmt.Errorf("%s() got an unexpected keyword argument '%s'", fun, name)
			return false
		}
		out[name] = v
		return true
	})
	return out, err
}

func (a runnerArgs) str(name string) string {
	if v, ok := a[name]; ok && v != nil {
		return ordered.KeyString(v)
	}
	return ""
}

func (a runnerArgs) flag(name string, def bool) bool {
	v, ok := a[name]
	if !ok || v == nil {
		return def
	}
	return modules.Truthy(v)
}

// jobsRunner runs a jobs.* function that reads the job cache.
func (m *Master) jobsRunner(ctx context.Context, fun string, args []any, kw *ordered.Map) (any, error) {
	a, err := bindArgs(fun, jobsParams[fun], args, kw)
	if err != nil {
		return nil, err
	}
	if slices.Contains(jobsParams[fun], "jid") && a.str("jid") == "" {
		return nil, fmt.Errorf("%s: %w", fun, errNoJID)
	}
	st, done, err := m.readStore(ctx, a.str("ext_source"))
	if err != nil {
		return "Requested returner could not be loaded. No JIDs could be retrieved.", nil
	}
	defer done()
	j := jobsCall{m: m, ctx: ctx, st: st, progress: a.flag("display_progress", false)}
	switch fun {
	case "jobs.lookup_jid":
		return j.lookupJID(a.str("jid"), a.flag("returned", true), a.flag("missing", false)), nil
	case "jobs.list_job":
		return j.listJob(a.str("jid")), nil
	case "jobs.print_job":
		return j.printJob(a.str("jid")), nil
	case "jobs.exit_success":
		return j.exitSuccess(a.str("jid")), nil
	case "jobs.last_run":
		if md, ok := a["metadata"]; ok && md != nil {
			if _, ok := md.(*ordered.Map); !ok {
				m.log.Info("The metadata parameter must be specified as a dictionary")
				return false, nil
			}
		}
		f := jobFilter{metadata: a["metadata"], function: a["function"], target: a["target"]}
		return j.lastRun(f)
	}
	f := jobFilter{metadata: a["search_metadata"], function: a["search_function"], target: a["search_target"],
		start: a.str("start_time"), end: a.str("end_time")}
	jobs, err := j.listJobs(f)
	if err != nil {
		return nil, err
	}
	return withOutputter(a.str("outputter"), jobs), nil
}

func withOutputter(outputter string, data any) any {
	if outputter == "" {
		return data
	}
	return ordered.FromPairs("outputter", outputter, "data", data)
}

// jobsCall is one jobs.* call against one store.
type jobsCall struct {
	m        *Master
	ctx      context.Context
	st       jobcache.Store
	progress bool
}

// say fires a progress event (display_progress), as __jid_event__
// does: salt/run/<jid>/progress with {"message": …}.
func (j jobsCall) say(format string, args ...any) {
	if jid := runJID(j.ctx); j.progress && jid != "" {
		j.m.bus.Fire("salt/run/"+jid+"/progress", ordered.FromPairs("message", fmt.Sprintf(format, args...)))
	}
}

// listJob is jobs.list_job: the load's summary, the targeted minions
// and get_jid as Result.
func (j jobsCall) listJob(jid string) *ordered.Map {
	out := ordered.FromPairs("jid", jid)
	j.say("Querying returner: %s", j.st.Name())
	load, _ := j.st.GetLoad(j.ctx, jid)
	jobcache.FormatJIDInstance(jid, load).Range(func(k, v any) bool { out.Set(k, v); return true })
	if ids, ok := load.Get("Minions"); ok {
		out.Set("Minions", ids)
	}
	res, err := j.st.GetJID(j.ctx, jid)
	if err != nil {
		res = ordered.New()
	}
	out.Set("Result", res)
	return out
}

// lookupJID is jobs.lookup_jid: each minion's return; with missing, the
// targeted minions that did not return; {"outputter", "data"} when the
// returns name an outputter.
func (j jobsCall) lookupJID(jid string, returned, missing bool) any {
	data := j.listJob(jid)
	res, _ := data.Value("Result").(*ordered.Map)
	out := ordered.New()
	outputter := ""
	res.Range(func(k, v any) bool {
		id := ordered.KeyString(k)
		j.say("%s", id)
		r, _ := v.(*ordered.Map)
		if returned {
			out.Set(id, r.Value("return"))
		}
		if outputter == "" && out.Len() <= 1 {
			outputter, _ = r.Value("out").(string)
		}
		return true
	})
	if missing {
		ids, _ := data.Value("Minions").([]any)
		for _, x := range ids {
			if id := ordered.KeyString(x); !res.Has(id) {
				out.Set(id, "Minion did not return")
			}
		}
	}
	return withOutputter(outputter, out)
}

// printJob is jobs.print_job: {jid: summary with Result}.
func (j jobsCall) printJob(jid string) *ordered.Map {
	load, _ := j.st.GetLoad(j.ctx, jid)
	info := jobcache.FormatJIDInstance(jid, load)
	res, err := j.st.GetJID(j.ctx, jid)
	if err != nil {
		res = ordered.New()
	}
	info.Set("Result", res)
	return ordered.FromPairs(jid, info)
}

// exitSuccess is jobs.exit_success: per minion whether its return is
// truthy; targeted minions that did not return are False.
func (j jobsCall) exitSuccess(jid string) *ordered.Map {
	data := j.listJob(jid)
	res, _ := data.Value("Result").(*ordered.Map)
	out := ordered.New()
	ids, _ := data.Value("Minions").([]any)
	for _, x := range ids {
		r, _ := res.Value(x).(*ordered.Map)
		out.Set(ordered.KeyString(x), r.Has("return") && modules.Truthy(r.Value("return")))
	}
	res.Range(func(k, v any) bool {
		if r, _ := v.(*ordered.Map); modules.Truthy(r.Value("return")) {
			out.Set(ordered.KeyString(k), true)
		}
		return true
	})
	return out
}

// lastRun is jobs.last_run: print_job of the newest job the filters
// pass, False when none does.
func (j jobsCall) lastRun(f jobFilter) (any, error) {
	jobs, err := j.listJobs(f)
	if err != nil {
		return nil, err
	}
	keys := jobs.StringKeys()
	if len(keys) == 0 {
		return false, nil
	}
	slices.Sort(keys)
	return j.printJob(keys[len(keys)-1]), nil
}

// jobFilter is list_jobs' search_metadata, search_function,
// search_target, start_time and end_time.
type jobFilter struct {
	metadata, function, target any
	start, end                 string
}

// listJobs is jobs.list_jobs over get_jids: only the jobs every given
// filter passes.
func (j jobsCall) listJobs(f jobFilter) (*ordered.Map, error) {
	var start, end time.Time
	var err error
	if f.start != "" {
		if start, err = parseTime(f.start); err != nil {
			return nil, fmt.Errorf("jobs.list_jobs: start_time: %w", err)
		}
	}
	if f.end != "" {
		if end, err = parseTime(f.end); err != nil {
			return nil, fmt.Errorf("jobs.list_jobs: end_time: %w", err)
		}
	}
	j.say("Querying returner %s for jobs.", j.st.Name())
	jobs, err := j.st.GetJIDs(j.ctx)
	if err != nil {
		return nil, fmt.Errorf("jobs.list_jobs: %w", err)
	}
	md, mdIsMap := f.metadata.(*ordered.Map)
	if f.metadata != nil && !mdIsMap && modules.Truthy(f.metadata) {
		j.m.log.Info("The search_metadata parameter must be specified as a dictionary.  Ignoring.")
	}
	out := ordered.New()
	for _, job := range jobs {
		info := jobcache.FormatJIDInstance(job.JID, job.Load)
		if mdIsMap && md.Len() > 0 && !metadataMatch(info, md) {
			continue
		}
		if f.metadata != nil && !mdIsMap && modules.Truthy(f.metadata) {
			continue // Salt's _match stays False
		}
		if modules.Truthy(f.target) && !anyGlob(targets(info.Value("Target")), splitInput(f.target)) {
			continue
		}
		if modules.Truthy(f.function) && !anyGlob([]string{ordered.KeyString(info.Value("Function"))}, splitInput(f.function)) {
			continue
		}
		if !start.IsZero() || !end.IsZero() {
			t, err := jobcache.JIDTime(job.JID)
			if err != nil || (!start.IsZero() && t.Before(start)) || (!end.IsZero() && t.After(end)) {
				continue
			}
		}
		out.Set(job.JID, info)
	}
	return out, nil
}

// metadataMatch: any key of want equal in the job's Metadata.
func metadataMatch(info, want *ordered.Map) bool {
	have, _ := info.Value("Metadata").(*ordered.Map)
	ok := false
	want.Range(func(k, v any) bool {
		if hv, in := have.Get(k); in && ordered.Equal(hv, v) {
			ok = true
			return false
		}
		return true
	})
	return ok
}

func targets(v any) []string {
	if l, ok := v.([]any); ok {
		out := make([]string, len(l))
		for i, x := range l {
			out[i] = ordered.KeyString(x)
		}
		return out
	}
	return []string{ordered.KeyString(v)}
}

func anyGlob(names, pats []string) bool {
	for _, n := range names {
		for _, p := range pats {
			if compile.Fnmatch(n, p) {
				return true
			}
		}
	}
	return false
}

// splitInput is salt.utils.args.split_input: a list as is, a string
// split at commas, each item stripped.
func splitInput(v any) []string {
	var parts []string
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			parts = append(parts, ordered.KeyString(e))
		}
	default:
		parts = strings.Split(ordered.KeyString(v), ",")
	}
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

// timeLayouts are the timestamp forms list_jobs' start_time and
// end_time take (dateutil parses many more): Salt's own StartTime
// ("2015, Mar 16 19:00:00.123456" and shorter), ISO 8601 dates and
// times, and a few common ones.
var timeLayouts = []string{
	"2006, Jan 02 15:04:05.999999", "2006, Jan 02 15:04:05", "2006, Jan 02 15:04", "2006, Jan 2 15:04", "2006, Jan 02",
	"2006-01-02T15:04:05.999999", "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05.999999",
	"2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02", "2006/01/02 15:04:05", "2006/01/02 15:04", "2006/01/02",
	"Jan 02 2006 15:04:05", "Jan 02 2006 15:04", "Jan 2 2006", "02 Jan 2006 15:04", "02 Jan 2006", "20060102150405",
}

// parseTime reads a start_time or end_time in local time, as jids are.
func parseTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	for _, l := range timeLayouts {
		if t, err := time.ParseInLocation(l, s, time.Local); err == nil {
			return t, nil
		}
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("unknown string format: %s", s)
}

type runJIDKey struct{}

// withRunJID carries the jid of a runner job to its function.
func withRunJID(ctx context.Context, jid string) context.Context {
	return context.WithValue(ctx, runJIDKey{}, jid)
}

func runJID(ctx context.Context) string {
	s, _ := ctx.Value(runJIDKey{}).(string)
	return s
}
