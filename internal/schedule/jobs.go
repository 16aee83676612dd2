package schedule

import (
	"fmt"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/pytime"
)

// Reload is Schedule.reload: the entries of sched (a {"schedule": …}
// document or the mapping itself) are merged into the configuration's
// schedule, and every job's timing starts afresh.
func (s *Schedule) Reload(sched *ordered.Map) {
	if inner, ok := sched.Value("schedule").(*ordered.Map); ok {
		sched = inner
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sched.Range(func(k, v any) bool {
		s.opts.Set(k, ordered.DeepCopy(v))
		return true
	})
	s.state = map[string]*jobState{}
}

// AddExplicit appends {time, time_fmt} to the job's key list
// (run_explicit or skip_explicit), as postpone_job and skip_job do; a
// pillar job is left alone with Salt's "Cannot modify job %s, it's in
// the pillar!". It reports whether the job is in the schedule and
// enabled, which Salt's functions answer with.
func (s *Schedule) AddExplicit(name, key, at, format string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if data, ok := s.opts.Value(name).(*ordered.Map); ok {
		list, _ := data.Value(key).([]any)
		data.Set(key, append(list, ordered.FromPairs("time", at, "time_fmt", format)))
	} else if s.inPillar(name) {
		s.log.Warn(fmt.Sprintf("Cannot modify job %s, it's in the pillar!", name))
	}
	data, ok := s.merged(All).Value(name).(*ordered.Map)
	return ok && truthyDefault(data, "enabled", true)
}

// NextFireTime is get_next_fire_time: when the job runs next, as far as
// its evaluation so far knows (an interval or cron job once it has been
// evaluated, a once job before it ran); false when that is not known.
func (s *Schedule) NextFireTime(name string) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	data, ok := s.merged(All).Value(name).(*ordered.Map)
	if !ok {
		return time.Time{}, false
	}
	st := s.state[name]
	if v, has := data.Get("once"); has && (st == nil || !st.onceDone) {
		format := DefaultTimeFmt
		if f, isStr := data.Value("once_fmt").(string); isStr {
			format = f
		}
		t, err := pytime.Strptime(fmt.Sprint(v), format)
		return t, err == nil
	}
	if st == nil || st.next.IsZero() {
		return time.Time{}, false
	}
	return st.next, true
}

// Status is job_status: the job's entry with the scheduler's own keys
// (_next_fire_time, _last_run, _skip_reason, _skipped_time, _skipped)
// as times formatted with format; {} for a job that is not there.
func (s *Schedule) Status(name, format string) *ordered.Map {
	next, hasNext := s.NextFireTime(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	data, ok := s.merged(All).Value(name).(*ordered.Map)
	if !ok {
		return ordered.New()
	}
	if !data.Has("name") {
		data.Set("name", name)
	}
	stamp := func(t time.Time) string { return pytime.Strftime(t, format) }
	if hasNext {
		data.Set("_next_fire_time", stamp(next))
	}
	if st := s.state[name]; st != nil {
		if !st.lastRun.IsZero() {
			data.Set("_last_run", stamp(st.lastRun))
		}
		if st.skipReason != "" {
			data.Set("_skip_reason", st.skipReason)
			data.Set("_skipped_time", stamp(st.skippedAt))
			data.Set("_skipped", true)
		}
	}
	return data
}
