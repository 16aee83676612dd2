package master

import (
	"fmt"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/jobcache"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/compile"
)

// listJobsKeys are jobs.list_jobs's keyword arguments.
var listJobsKeys = map[string]bool{"ext_source": true, "outputter": true, "search_metadata": true,
	"search_function": true, "search_target": true, "start_time": true, "end_time": true, "display_progress": true}

// listJobsFiltered is salt/runners/jobs.py list_jobs with its filters:
// search_metadata (a dict, any key equal), search_target and
// search_function (fnmatch patterns, a comma list or a list),
// start_time and end_time (against the job's start), and outputter
// ({"outputter", "data"}). web front-ends call it with search_function
// to list recent jobs. The only job cache is local_cache, and the
// progress events of display_progress are not fired: asking for another
// ext_source or for display_progress is an error.
func (m *Master) listJobsFiltered(kw *ordered.Map) (any, error) {
	f, err := parseJobFilter(kw)
	if err != nil {
		return nil, err
	}
	all := m.listJobs()
	out := ordered.New()
	all.Range(func(jid, v any) bool {
		if f.match(ordered.KeyString(jid), v.(*ordered.Map)) {
			out.Set(jid, v)
		}
		return true
	})
	if o := ordered.KeyString(kw.Value("outputter")); kw.Value("outputter") != nil && o != "" {
		return ordered.FromPairs("outputter", o, "data", out), nil
	}
	return out, nil
}

// jobFilter is list_jobs's search.
type jobFilter struct {
	metaIsDict, hasMetadata bool
	meta                    *ordered.Map
	targets, functions      []string
	start, end              time.Time
}

func parseJobFilter(kw *ordered.Map) (*jobFilter, error) {
	f := &jobFilter{}
	var err error
	kw.Range(func(k, v any) bool {
		key := ordered.KeyString(k)
		if !listJobsKeys[key] {
			err = fmt.Errorf("'%s' is an invalid keyword argument for 'jobs.list_jobs'", key)
			return false
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	if src := kw.Value("ext_source"); src != nil && ordered.KeyString(src) != "local_cache" {
		return nil, fmt.Errorf("jobs.list_jobs: ext_source %v: Brine's only job cache is local_cache", src)
	}
	if b, _ := kw.Value("display_progress").(bool); b {
		return nil, fmt.Errorf("jobs.list_jobs: display_progress is not supported")
	}
	if v := kw.Value("search_metadata"); v != nil {
		f.hasMetadata = true
		f.meta, f.metaIsDict = v.(*ordered.Map)
	}
	f.targets, f.functions = splitInput(kw.Value("search_target")), splitInput(kw.Value("search_function"))
	for _, t := range []struct {
		key string
		dst *time.Time
	}{{"start_time", &f.start}, {"end_time", &f.end}} {
		if v := kw.Value(t.key); v != nil {
			if *t.dst, err = parseJobTime(ordered.KeyString(v)); err != nil {
				return nil, fmt.Errorf("jobs.list_jobs: %s: %w", t.key, err)
			}
		}
	}
	return f, nil
}

// match is the list_jobs loop's _match for one job.
func (f *jobFilter) match(jid string, job *ordered.Map) bool {
	if f.hasMetadata && !f.matchMetadata(job) {
		return false
	}
	if f.targets != nil && !anyFnmatch(targetsOf(job.Value("Target")), f.targets) {
		return false
	}
	if f.functions != nil && !anyFnmatch([]string{ordered.KeyString(job.Value("Function"))}, f.functions) {
		return false
	}
	if !f.start.IsZero() || !f.end.IsZero() {
		t, err := jobcache.JIDTime(jid)
		if err != nil || (!f.start.IsZero() && t.Before(f.start)) || (!f.end.IsZero() && t.After(f.end)) {
			return false
		}
	}
	return true
}

// matchMetadata: some key of search_metadata equal in the job's
// Metadata; a search_metadata that is not a dict matches nothing (Salt
// logs it and leaves _match False).
func (f *jobFilter) matchMetadata(job *ordered.Map) bool {
	md, ok := job.Value("Metadata").(*ordered.Map)
	if !ok || !f.metaIsDict {
		return false
	}
	found := false
	f.meta.Range(func(k, v any) bool {
		if w, ok := md.Get(k); ok && ordered.Equal(w, v) {
			found = true
			return false
		}
		return true
	})
	return found
}

// splitInput is salt.utils.args.split_input: a list, or a comma list;
// nil for no filter.
func splitInput(v any) []string {
	if v == nil {
		return nil
	}
	var out []string
	if l, ok := v.([]any); ok {
		for _, e := range l {
			out = append(out, ordered.KeyString(e))
		}
		return out
	}
	for _, p := range strings.Split(ordered.KeyString(v), ",") {
		out = append(out, strings.TrimSpace(p))
	}
	return out
}

func targetsOf(v any) []string {
	if l, ok := v.([]any); ok {
		out := make([]string, len(l))
		for i, e := range l {
			out[i] = ordered.KeyString(e)
		}
		return out
	}
	return []string{ordered.KeyString(v)}
}

func anyFnmatch(names, pats []string) bool {
	for _, n := range names {
		for _, p := range pats {
			if compile.Fnmatch(n, p) {
				return true
			}
		}
	}
	return false
}

// jobTimeLayouts are the forms start_time and end_time are read in
// (Salt hands them to dateutil, which reads many more): ISO dates and
// times, and the StartTime jobs.list_jobs shows.
var jobTimeLayouts = []string{"2006-01-02T15:04:05.999999", "2006-01-02 15:04:05.999999", "2006-01-02T15:04:05",
	"2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02", "2006, Jan 02 15:04:05.999999", "2006, Jan 02 15:04:05"}

// parseJobTime reads a time as the job cache's JIDs are, in local time.
func parseJobTime(s string) (time.Time, error) {
	for _, l := range jobTimeLayouts {
		if t, err := time.ParseInLocation(l, strings.TrimSpace(s), time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a date and time Brine reads (2006-01-02 15:04:05)", s)
}
