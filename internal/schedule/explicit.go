package schedule

import (
	"fmt"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/internal/pytime"
)

// DefaultTimeFmt is the time_fmt of run_explicit and skip_explicit
// items that name none, and the format of the times postpone_job and
// skip_job write.
const DefaultTimeFmt = "%Y-%m-%dT%H:%M:%S"

// explicitTimes reads a run_explicit or skip_explicit list: items
// {time, time_fmt} (time_fmt DefaultTimeFmt when absent), sorted as
// given. ok false means an item does not parse; it is reported once.
func (s *Schedule) explicitTimes(name, key string, data *ordered.Map) ([]time.Time, bool) {
	list, isList := data.Value(key).([]any)
	if v := data.Value(key); v != nil && !isList {
		s.warnOnce(name, fmt.Sprintf("schedule: job %s: %s must be a list of {time, time_fmt}. Ignoring job %s.", name, key, name))
		return nil, false
	}
	var out []time.Time
	for _, it := range list {
		m, isMap := it.(*ordered.Map)
		if !isMap {
			s.warnOnce(name, fmt.Sprintf("schedule: job %s: %s items must be {time, time_fmt}, not %v. Ignoring job %s.", name, key, it, name))
			return nil, false
		}
		format := DefaultTimeFmt
		if f, ok := m.Value("time_fmt").(string); ok && f != "" {
			format = f
		}
		t, err := pytime.Strptime(fmt.Sprint(m.Value("time")), format)
		if err != nil {
			s.warnOnce(name, fmt.Sprintf("Date string could not be parsed: %v, %s. Ignoring job %s.", m.Value("time"), format, name))
			return nil, false
		}
		out = append(out, t)
	}
	return out, true
}

// runExplicit is _handle_run_explicit: the job runs when the first
// explicit time still current (times more than a loop_interval past are
// dropped while others remain) came within the last loop_interval. The
// time run_after_skip_range set counts as one more.
func (s *Schedule) runExplicit(name string, data *ordered.Map, st *jobState, now time.Time) (run, ok bool) {
	times, ok := s.explicitTimes(name, "run_explicit", data)
	if !ok {
		return false, false
	}
	if !st.runAfter.IsZero() {
		times = append(times, st.runAfter)
	}
	loop := s.o.LoopInterval
	var kept []time.Time
	for _, t := range times {
		if len(times) > 1 && t.Before(now.Add(-loop)) {
			continue
		}
		kept = append(kept, t)
	}
	for _, t := range kept {
		if !now.Before(t) && now.Before(t.Add(loop)) {
			if t.Equal(st.runAfter) {
				st.runAfter = time.Time{}
			}
			return true, true
		}
	}
	return false, true
}

// skipExplicit is _handle_skip_explicit: a due job is skipped when one
// of the explicit times (those not more than a loop_interval past) came
// within the last loop_interval.
func (s *Schedule) skipExplicit(name string, data *ordered.Map, now time.Time) (skip bool, reason string, ok bool) {
	times, ok := s.explicitTimes(name, "skip_explicit", data)
	if !ok {
		return false, "", false
	}
	loop := s.o.LoopInterval
	for _, t := range times {
		if !now.Before(t) && !now.After(t.Add(loop)) {
			return true, "skip_explicit", true
		}
	}
	return false, "", true
}

// skipDuringRange is _handle_skip_during_range, with the job's or the
// global skip_during_range {start, end}: a due job is skipped between
// them; with run_after_skip_range it runs once a loop_interval after
// the range ends (Salt appends that time to run_explicit).
func (s *Schedule) skipDuringRange(name string, data *ordered.Map, st *jobState, now time.Time) (skip bool, reason string, ok bool) {
	v := data.Value("skip_during_range")
	if v == nil || !py.Truthy(v) {
		return false, "", true
	}
	r, isMap := v.(*ordered.Map)
	if !isMap || !r.Has("start") || !r.Has("end") {
		s.warnOnce(name, fmt.Sprintf("schedule.handle_func: Invalid, range must be specified as a dictionary. Ignoring job %s.", name))
		return false, "", false
	}
	start, err := ParseDate(fmt.Sprint(r.Value("start")), now)
	if err != nil {
		s.warnOnce(name, fmt.Sprintf("Invalid date string for start in skip_during_range. Ignoring job %s.", name))
		return false, "", false
	}
	end, err := ParseDate(fmt.Sprint(r.Value("end")), now)
	if err != nil {
		s.warnOnce(name, fmt.Sprintf("Invalid date string for end in skip_during_range. Ignoring job %s.", name))
		return false, "", false
	}
	if !end.After(start) {
		s.warnOnce(name, fmt.Sprintf("schedule.handle_func: Invalid range, end must be larger than start. Ignoring job %s.", name))
		return false, "", false
	}
	if py.Truthy(data.Value("run_after_skip_range")) {
		st.runAfter = end.Add(s.o.LoopInterval).Truncate(time.Second)
	}
	if !now.Before(start) && !now.After(end) {
		return true, "in_skip_range", true
	}
	return false, "", true
}
