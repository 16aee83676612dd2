package schedule

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/internal/pytime"
)

var timeElements = []string{"seconds", "minutes", "hours", "days"}

var schedulingElements = []string{"when", "cron", "once"}

// ErrInvalid is an entry the scheduler refuses.
var ErrInvalid = errors.New("invalid schedule entry")

// Validate checks an entry as Salt's eval does before running it, and
// the cron string with the parser croniter stands for: the error names
// the job.
func Validate(name string, data *ordered.Map) error {
	if data == nil {
		//lint:ignore ST1005 Salt's exact message
		return fmt.Errorf("Scheduled job %q should have a dict value: %w", name, ErrInvalid)
	}
	if funcOf(data) == "" {
		return fmt.Errorf("scheduled job %s has no function: %w", name, ErrInvalid)
	}
	n := 0
	for _, k := range schedulingElements {
		if data.Has(k) {
			n++
		}
	}
	if n > 1 {
		return fmt.Errorf("job %s: Unable to use \"when\", \"cron\", \"once\" options together. Ignoring.: %w", name, ErrInvalid)
	}
	hasTime := false
	for _, k := range timeElements {
		if v, ok := data.Get(k); ok {
			hasTime = true
			if _, isInt := asInt(v); !isInt {
				return fmt.Errorf("job %s: %s must be a number, not %v: %w", name, k, v, ErrInvalid)
			}
		}
	}
	if hasTime && n > 0 {
		return fmt.Errorf("job %s: Unable to use \"seconds\", \"minutes\", \"hours\", \"days\" with \"when\", \"cron\", \"once\" options. Ignoring: %w", name, ErrInvalid)
	}
	if v, ok := data.Get("cron"); ok {
		s, _ := v.(string)
		if _, err := ParseCron(s); err != nil {
			//lint:ignore ST1005 Salt's exact message
			return fmt.Errorf("Invalid cron string. Ignoring job %s.: %w", name, err)
		}
	}
	if v, ok := data.Get("range"); ok {
		r, isMap := v.(*ordered.Map)
		if !isMap || !r.Has("start") || !r.Has("end") {
			return fmt.Errorf("schedule.handle_func: Invalid, range must be specified as a dictionary.Ignoring job %s.: %w", name, ErrInvalid)
		}
	}
	return validateSplay(name, data.Value("splay"))
}

func validateSplay(name string, v any) error {
	switch x := v.(type) {
	case nil:
		return nil
	case *ordered.Map:
		a, ok1 := asInt(x.Value("start"))
		b, ok2 := asInt(x.Value("end"))
		if !ok1 || !ok2 || b < a {
			return fmt.Errorf("job %s: schedule.handle_func: Invalid Splay, end must be larger than start. Ignoring splay.: %w", name, ErrInvalid)
		}
		return nil
	}
	if _, ok := asInt(v); !ok {
		return fmt.Errorf("job %s: splay must be a number or {start, end}: %w", name, ErrInvalid)
	}
	return nil
}

// splaySeconds is _splay: random in [start, end] or [1, n].
func splaySeconds(v any) int {
	if m, ok := v.(*ordered.Map); ok {
		a, _ := asInt(m.Value("start"))
		b, _ := asInt(m.Value("end"))
		return randInt(a, b)
	}
	n, _ := asInt(v)
	if n <= 0 {
		return 0
	}
	return randInt(1, n)
}

func intervalOf(data *ordered.Map) time.Duration {
	total := 0
	for i, mult := range []int{1, 60, 3600, 86400} {
		n, _ := asInt(data.Value(timeElements[i]))
		total += n * mult
	}
	return time.Duration(total) * time.Second
}

// Eval is one pass of Salt's eval: every due entry starts. It returns
// the names started.
func (s *Schedule) Eval(ctx context.Context, now time.Time) []string {
	s.mu.Lock()
	sched := s.merged(All)
	enabled := s.enabledLocked()
	globalSplay := sched.Value("splay")
	globalSkip := sched.Value("skip_during_range")
	skipFunction, _ := sched.Value("skip_function").(string)
	var due []string
	var datas []*ordered.Map
	sched.Range(func(k, v any) bool {
		name := ordered.KeyString(k)
		if hidden[name] {
			return true
		}
		data, ok := v.(*ordered.Map)
		if !ok {
			s.warnOnce(name, fmt.Sprintf("Scheduled job %q should have a dict value, not %T", name, v))
			return true
		}
		if n, ok := data.Value("name").(string); ok && n != "" {
			name = n
		}
		if !data.Has("splay") && globalSplay != nil {
			data.Set("splay", globalSplay)
		}
		if !data.Has("skip_during_range") && globalSkip != nil {
			data.Set("skip_during_range", globalSkip)
		}
		run, fun := s.evalJob(name, data, now, enabled, skipFunction)
		if run {
			if fun != "" {
				data.Set("function", fun)
			}
			due = append(due, name)
			datas = append(datas, data)
		}
		return true
	})
	s.mu.Unlock()
	for i, name := range due {
		s.log.Info(fmt.Sprintf("Running scheduled job: %s", name))
		s.start(ctx, name, datas[i])
	}
	return due
}

// evalJob decides whether one entry runs now (s.mu held); fun is the
// function to run instead (skip_function outside a range).
func (s *Schedule) evalJob(name string, data *ordered.Map, now time.Time, enabled bool, skipFunction string) (bool, string) {
	if err := Validate(name, data); err != nil {
		s.warnOnce(name, err.Error())
		return false, ""
	}
	st := s.state[name]
	if st == nil {
		st = &jobState{}
		s.state[name] = st
	}
	explicit, ok := s.runExplicit(name, data, st, now)
	if !ok {
		return false, ""
	}
	run, ok := s.due(name, data, st, now)
	if !ok {
		return false, ""
	}
	run = run || explicit
	if !st.started {
		st.started = true
		if v, has := data.Get("run_on_start"); has && py.Truthy(v) {
			run = true
		}
	}
	fun := ""
	if run {
		run, fun = s.gates(name, data, st, now, skipFunction)
	}
	if !enabled || !truthyDefault(data, "enabled", true) {
		run = false
	}
	if run && !s.mayStart(name, data) {
		run = false
	}
	if run {
		st.lastRun = now
	}
	return run, fun
}

func truthyDefault(data *ordered.Map, key string, def bool) bool {
	v, ok := data.Get(key)
	if !ok {
		return def
	}
	return py.Truthy(v)
}

// due is the timing half of eval: the time elements, once, when and
// cron, with splay. ok false means the entry has no timing or an error.
func (s *Schedule) due(name string, data *ordered.Map, st *jobState, now time.Time) (run, ok bool) {
	loop := s.o.LoopInterval
	switch {
	case intervalOf(data) > 0:
		iv := intervalOf(data)
		if st.next.IsZero() {
			st.next = now.Add(iv)
		}
		if !now.Truncate(time.Second).Before(st.next.Truncate(time.Second)) {
			if !s.splayed(data, st, now) {
				return false, true
			}
			st.next = now.Add(iv)
			return true, true
		}
		return false, true
	case data.Has("once"):
		if st.onceDone {
			return false, true
		}
		format := "%Y-%m-%dT%H:%M:%S"
		if f, isStr := data.Value("once_fmt").(string); isStr {
			format = f
		}
		t, err := pytime.Strptime(fmt.Sprint(data.Value("once")), format)
		if err != nil {
			s.warnOnce(name, fmt.Sprintf("Date string could not be parsed: %v, %s. Ignoring job %s.", data.Value("once"), format, name))
			return false, false
		}
		if !now.Before(t) && !now.After(t.Add(loop)) {
			st.onceDone = true
			return true, true
		}
		return false, true
	case data.Has("when"):
		return s.dueWhen(name, data, st, now)
	case data.Has("cron"):
		c, _ := ParseCron(fmt.Sprint(data.Value("cron")))
		if st.next.IsZero() {
			st.next = c.Next(now)
			if st.next.IsZero() {
				s.warnOnce(name, fmt.Sprintf("cron %q never matches; job %s does not run", c, name))
				return false, false
			}
		}
		if !now.Before(st.next) {
			if !s.splayed(data, st, now) {
				return false, true
			}
			st.next = time.Time{}
			return true, true
		}
		return false, true
	}
	return false, false
}

// splayed reports whether a due job's splay has passed: the first time
// a job is due a random splay is drawn and the run waits for it.
func (s *Schedule) splayed(data *ordered.Map, st *jobState, now time.Time) bool {
	v := data.Value("splay")
	if v == nil || !py.Truthy(v) {
		return true
	}
	if st.splayAt.IsZero() {
		st.splayAt = now.Add(time.Duration(splaySeconds(v)) * time.Second)
	}
	if now.Before(st.splayAt) {
		return false
	}
	st.splayAt = time.Time{}
	return true
}

// dueWhen is _handle_when: a list of times (or names looked up in the
// pillar's, then the grains' `whens`), each run once within
// loop_interval after it comes.
func (s *Schedule) dueWhen(name string, data *ordered.Map, st *jobState, now time.Time) (bool, bool) {
	var whens []any
	switch w := data.Value("when").(type) {
	case []any:
		whens = w
	default:
		whens = []any{w}
	}
	var pw, gw *ordered.Map
	if s.o.Whens != nil {
		pw, gw = s.o.Whens()
	}
	for _, w := range whens {
		text := fmt.Sprint(w)
		if v, ok := lookupWhen(text, pw, gw); ok {
			text = v
		}
		t, err := ParseDate(text, now)
		if err != nil {
			s.warnOnce(name, fmt.Sprintf("Invalid date string %s. Ignoring job %s.", text, name))
			return false, false
		}
		if !now.Before(t) && !now.After(t.Add(s.o.LoopInterval)) && !st.lastWhen.Equal(t) {
			if !s.splayed(data, st, now) {
				return false, true
			}
			st.lastWhen = t
			return true, true
		}
	}
	return false, true
}

func lookupWhen(key string, maps ...*ordered.Map) (string, bool) {
	for _, m := range maps {
		if m == nil {
			continue
		}
		if v, ok := m.Value(key).(string); ok {
			return v, true
		}
	}
	return "", false
}

// gates are the checks Salt makes once a job is due: range (with
// skip_function), after and until.
func (s *Schedule) gates(name string, data *ordered.Map, st *jobState, now time.Time, skipFunction string) (bool, string) {
	run, fun := s.rangeGate(name, data, now, skipFunction)
	if !run {
		return false, ""
	}
	for _, gate := range []func() (bool, string, bool){
		func() (bool, string, bool) { return s.skipDuringRange(name, data, st, now) },
		func() (bool, string, bool) { return s.skipExplicit(name, data, now) },
	} {
		skip, reason, ok := gate()
		if !ok {
			return false, ""
		}
		if skip {
			if skipFunction != "" {
				fun = skipFunction
				continue
			}
			st.skipReason, st.skippedAt = reason, now
			return false, ""
		}
	}
	if !s.afterUntil(name, data, now) {
		return false, ""
	}
	return true, fun
}

// rangeGate is _handle_range: outside {start, end} (inside, with
// invert) the job is skipped, or skip_function runs instead.
func (s *Schedule) rangeGate(name string, data *ordered.Map, now time.Time, skipFunction string) (bool, string) {
	if r, ok := data.Value("range").(*ordered.Map); ok {
		start, err1 := ParseDate(fmt.Sprint(r.Value("start")), now)
		end, err2 := ParseDate(fmt.Sprint(r.Value("end")), now)
		if err1 != nil || err2 != nil {
			s.warnOnce(name, fmt.Sprintf("Invalid date string for start or end. Ignoring job %s.", name))
			return false, ""
		}
		if !end.After(start) {
			s.warnOnce(name, fmt.Sprintf("schedule.handle_func: Invalid range, end must be larger than start. Ignoring job %s.", name))
			return false, ""
		}
		in := !now.Before(start) && !now.After(end)
		if py.Truthy(r.Value("invert")) {
			if !now.After(start) || !now.Before(end) {
				in = true
			} else {
				return false, ""
			}
		} else if !in {
			if skipFunction != "" {
				return true, skipFunction
			}
			return false, ""
		}
	}
	return true, ""
}

// afterUntil is _handle_after and _handle_until.
func (s *Schedule) afterUntil(name string, data *ordered.Map, now time.Time) bool {
	for _, k := range []string{"after", "until"} {
		v, ok := data.Get(k)
		if !ok {
			continue
		}
		t, err := ParseDate(fmt.Sprint(v), now)
		if err != nil {
			s.warnOnce(name, fmt.Sprintf("Invalid date string for %s. Ignoring job %s.", k, name))
			return false
		}
		if (k == "after" && !t.Before(now)) || (k == "until" && !t.After(now)) {
			return false
		}
	}
	return true
}

// KnownKeys are the entry keys schedule.list shows (SCHEDULE_CONF in
// salt/modules/schedule.py).
var KnownKeys = strings.Fields(`name maxrunning function splay range when once once_fmt returner
jid_include args kwargs _seconds seconds minutes hours days enabled return_job metadata cron until
after return_config return_kwargs run_on_start skip_during_range run_after_skip_range`)
