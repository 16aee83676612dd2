// Package schedule is Salt's scheduler (salt/utils/schedule.py) for the
// minion and the master: the `schedule:` entries of the configuration
// and of the pillar, evaluated every loop_interval, with the job
// management the schedule execution module drives (add, modify, delete,
// enable, disable, run_job, save) and the minion.d/_schedule.conf file
// Salt's persist writes. Running a job is the caller's: the minion runs
// an execution function and returns it to the master, the master runs a
// runner.
package schedule

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/brinesalt/brine/internal/jid"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/internal/saltyaml"
)

// Run is one job the scheduler starts.
type Run struct {
	Name   string
	Fun    string
	Args   []any
	Kwargs *ordered.Map
	// Data is a copy of the job's entry (returner, metadata, return_job,
	// return_config, …).
	Data *ordered.Map
	JID  string
}

// Provider is a running daemon with a scheduler: the schedule execution
// module finds the minion's through modules.Env.Minion.
type Provider interface {
	Schedule() *Schedule
}

// Options configure a Schedule.
type Options struct {
	// Schedule is the `schedule:` option (copied); nil is none.
	Schedule *ordered.Map
	// ConfFile is where Save and every persisting change write
	// ({"schedule": …}); see ConfFile.
	ConfFile string
	// LoopInterval is how often the schedule is evaluated (loop_interval,
	// 1 s on a minion, 60 s on a master); 0 means 1 s.
	LoopInterval time.Duration
	// Exec runs a job to its end; the scheduler calls it in its own
	// goroutine.
	Exec func(ctx context.Context, r Run)
	// Whens returns the pillar and grains `whens` mappings that name
	// times for `when:`; nil means none.
	Whens func() (pillar, grains *ordered.Map)
	Log   *slog.Logger
}

// Schedule holds the entries and their run state.
type Schedule struct {
	o      Options
	log    *slog.Logger
	mu     sync.Mutex
	opts   *ordered.Map // opts["schedule"]
	pillar *ordered.Map // pillar["schedule"]
	state  map[string]*jobState
	// warned holds "job\x00message" already logged, so a bad entry is
	// reported once, not on every evaluation.
	warned  map[string]bool
	running map[string]int
	jobs    sync.WaitGroup
	// loopCtx is Loop's context, which jobs started by RunJob run
	// under, so they end with the daemon and not with the request.
	loopCtx context.Context
}

// jobState is what Salt keeps in the entry's underscore keys
// (_next_fire_time, _splay, _run_on_start, _last_run).
type jobState struct {
	next     time.Time
	splayAt  time.Time
	lastWhen time.Time
	started  bool
	onceDone bool
	lastRun  time.Time
	// runAfter is run_after_skip_range's run, a loop_interval after the
	// skip range ends; skipReason and skippedAt the last skip
	// (_skip_reason, _skipped_time).
	runAfter   time.Time
	skipReason string
	skippedAt  time.Time
}

// hidden are the schedule's global settings, not jobs.
var hidden = map[string]bool{"enabled": true, "skip_function": true, "skip_during_range": true, "splay": true}

// IsGlobal reports whether key is one of the schedule's global settings
// (enabled, skip_function, skip_during_range, splay) rather than a job.
func IsGlobal(key string) bool { return hidden[key] }

// New returns a schedule over o.Schedule.
func New(o Options) *Schedule {
	if o.LoopInterval <= 0 {
		o.LoopInterval = time.Second
	}
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Schedule{o: o, log: log, opts: ordered.New(), pillar: ordered.New(),
		state: map[string]*jobState{}, warned: map[string]bool{}, running: map[string]int{}}
	if o.Schedule != nil {
		s.opts = ordered.DeepCopy(o.Schedule).(*ordered.Map)
	}
	return s
}

// ConfFile is where Salt's persist writes the schedule: the directory of
// default_include (minion.d or master.d) under conf_dir, or the
// directory of conf_file, named _schedule.conf (salt/utils/schedule.py
// persist).
func ConfFile(confDir, defaultInclude string) string {
	return filepath.Join(confDir, filepath.Dir(defaultInclude), "_schedule.conf")
}

// SetPillar replaces the pillar's schedule (after a pillar refresh). A
// pillar schedule that is not a mapping is refused, as _get_schedule
// raises "Schedule must be of type dict.".
func (s *Schedule) SetPillar(v any) error {
	m, ok := v.(*ordered.Map)
	if v != nil && !ok {
		//lint:ignore ST1005 Salt's exact message
		return errors.New("Schedule must be of type dict.")
	}
	if m == nil {
		m = ordered.New()
	}
	s.mu.Lock()
	s.pillar = ordered.DeepCopy(m).(*ordered.Map)
	s.mu.Unlock()
	return nil
}

// Where selects part of the schedule as Salt's list(where=) does.
type Where string

// The parts of the schedule.
const (
	All    Where = ""
	Opts   Where = "opts"
	Pillar Where = "pillar"
)

// List is _get_schedule: the pillar's entries overlaid by the
// configuration's (copies).
func (s *Schedule) List(where Where) *ordered.Map {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.merged(where)
}

func (s *Schedule) merged(where Where) *ordered.Map {
	out := ordered.New()
	add := func(m *ordered.Map) {
		m.Range(func(k, v any) bool {
			out.Set(k, ordered.DeepCopy(v))
			return true
		})
	}
	if where != Opts {
		add(s.pillar)
	}
	if where != Pillar {
		add(s.opts)
	}
	return out
}

func (s *Schedule) inPillar(name string) bool { return s.pillar.Has(name) }

// Add is add_job: one named entry into the configuration's schedule
// (enabled defaults to true). An entry that fails Validate is refused; a
// name the pillar holds is left alone, as Salt warns "Cannot update job
// %s, it's in the pillar!".
func (s *Schedule) Add(name string, data *ordered.Map, persist bool) error {
	if err := Validate(name, data); err != nil {
		return err
	}
	data = ordered.DeepCopy(data).(*ordered.Map)
	if !data.Has("enabled") {
		data.Set("enabled", true)
	}
	s.mu.Lock()
	if s.inPillar(name) {
		s.mu.Unlock()
		s.log.Warn(fmt.Sprintf("Cannot update job %s, it's in the pillar!", name))
		return nil
	}
	s.opts.Set(name, data)
	delete(s.state, name)
	s.mu.Unlock()
	return s.maybePersist(persist)
}

// Modify is modify_job: the entry replaced by data.
func (s *Schedule) Modify(name string, data *ordered.Map, persist bool) error {
	if err := Validate(name, data); err != nil {
		return err
	}
	s.mu.Lock()
	if !s.opts.Has(name) && s.inPillar(name) {
		s.mu.Unlock()
		s.log.Warn(fmt.Sprintf("Cannot modify job %s, it's in the pillar!", name))
		return nil
	}
	s.opts.Set(name, ordered.DeepCopy(data))
	delete(s.state, name)
	s.mu.Unlock()
	return s.maybePersist(persist)
}

// Delete is delete_job; a pillar entry is not deleted.
func (s *Schedule) Delete(name string, persist bool) error {
	s.mu.Lock()
	if s.opts.Has(name) {
		s.opts.Delete(name)
		delete(s.state, name)
	} else if s.inPillar(name) {
		s.log.Warn(fmt.Sprintf("Cannot delete job %s, it's in the pillar!", name))
	}
	s.mu.Unlock()
	return s.maybePersist(persist)
}

// SetJobEnabled is enable_job and disable_job.
func (s *Schedule) SetJobEnabled(name string, on bool, persist bool) error {
	s.mu.Lock()
	if m, ok := s.opts.Value(name).(*ordered.Map); ok {
		m.Set("enabled", on)
	} else if s.inPillar(name) {
		s.log.Warn(fmt.Sprintf("Cannot modify job %s, it's in the pillar!", name))
	}
	s.mu.Unlock()
	return s.maybePersist(persist)
}

// SetEnabled is enable_schedule and disable_schedule: the global
// `enabled` key.
func (s *Schedule) SetEnabled(on bool, persist bool) error {
	s.mu.Lock()
	s.opts.Set("enabled", on)
	s.mu.Unlock()
	return s.maybePersist(persist)
}

// Enabled reports the global switch (true when unset).
func (s *Schedule) Enabled() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.enabledLocked()
}

func (s *Schedule) enabledLocked() bool {
	v, ok := s.merged(All).Get("enabled")
	return !ok || py.Truthy(v)
}

func (s *Schedule) maybePersist(persist bool) error {
	if !persist {
		return nil
	}
	return s.Save()
}

// Save is persist: the configuration's entries (not the pillar's, no
// underscore keys) as {"schedule": …} in ConfFile.
func (s *Schedule) Save() error {
	if s.o.ConfFile == "" {
		return errors.New("save schedule: no configuration directory")
	}
	s.mu.Lock()
	data := ordered.DeepCopy(s.opts).(*ordered.Map)
	s.mu.Unlock()
	data.Range(func(_, v any) bool {
		if m, ok := v.(*ordered.Map); ok {
			for _, k := range m.StringKeys() {
				if len(k) > 0 && k[0] == '_' {
					m.Delete(k)
				}
			}
		}
		return true
	})
	// The entries reach Salt's persist as plain dicts (through the event
	// bus), which PyYAML writes with sorted keys.
	text, err := saltyaml.Dump(ordered.FromPairs("schedule", data), saltyaml.DumpOptions{AutoFlow: true, SortKeys: true})
	if err != nil {
		return fmt.Errorf("save schedule: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(s.o.ConfFile), 0o755); err != nil {
		return fmt.Errorf("save schedule: %w", err)
	}
	if err := os.WriteFile(s.o.ConfFile, []byte(text), 0o644); err != nil {
		return fmt.Errorf("save schedule: %w", err)
	}
	return nil
}

// RunJob is run_job: the entry started now (whether or not it is due),
// unless maxrunning copies of it are running. While Loop runs the job
// runs under Loop's context, else under ctx.
func (s *Schedule) RunJob(ctx context.Context, name string) error {
	s.mu.Lock()
	if s.loopCtx != nil {
		ctx = s.loopCtx
	}
	data, ok := s.merged(All).Value(name).(*ordered.Map)
	if !ok {
		s.mu.Unlock()
		return fmt.Errorf("run job %s: no such job", name)
	}
	ok = s.mayStart(name, data)
	s.mu.Unlock()
	if ok {
		s.log.Info("Running Job: " + name)
		s.start(ctx, name, data)
	}
	return nil
}

// mayStart is _check_max_running: with jid_include (the default) no more
// than maxrunning (default 1) copies of a job run at once. s.mu is held.
func (s *Schedule) mayStart(name string, data *ordered.Map) bool {
	if v, ok := data.Get("jid_include"); ok && !py.Truthy(v) {
		return true
	}
	limit := 1
	if n, ok := asInt(data.Value("maxrunning")); ok {
		limit = n
	}
	if s.running[name] >= limit {
		s.log.Debug(fmt.Sprintf("schedule.handle_func: The scheduled job %s was not started, %d already running", name, limit))
		return false
	}
	return true
}

// start runs the job in its own goroutine, counted for maxrunning.
func (s *Schedule) start(ctx context.Context, name string, data *ordered.Map) {
	r := Run{Name: name, Fun: funcOf(data), Data: ordered.DeepCopy(data).(*ordered.Map), JID: jid.New(time.Now())}
	if a, ok := data.Value("args").([]any); ok {
		r.Args = ordered.DeepCopy(a).([]any)
	}
	if kw, ok := data.Value("kwargs").(*ordered.Map); ok {
		r.Kwargs = ordered.DeepCopy(kw).(*ordered.Map)
	}
	if v, ok := data.Get("dry_run"); ok && py.Truthy(v) {
		s.log.Debug(fmt.Sprintf("Job %s has 'dry_run' set to True. Not running it.", name))
		return
	}
	s.mu.Lock()
	s.running[name]++
	s.mu.Unlock()
	s.jobs.Add(1)
	go func() {
		defer s.jobs.Done()
		defer func() {
			s.mu.Lock()
			s.running[name]--
			s.mu.Unlock()
		}()
		s.o.Exec(ctx, r)
	}()
}

// Running is how many copies of job name are running.
func (s *Schedule) Running(name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running[name]
}

// Loop evaluates the schedule every loop_interval until ctx ends, then
// waits for the jobs it started.
func (s *Schedule) Loop(ctx context.Context) {
	defer s.jobs.Wait()
	s.mu.Lock()
	s.loopCtx = ctx
	s.mu.Unlock()
	t := time.NewTicker(s.o.LoopInterval)
	defer t.Stop()
	s.Eval(ctx, time.Now())
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			s.Eval(ctx, now)
		}
	}
}

// warnOnce logs msg for job once.
func (s *Schedule) warnOnce(job, msg string) {
	key := job + "\x00" + msg
	if s.warned[key] {
		return
	}
	s.warned[key] = true
	s.log.Error(msg)
}

func funcOf(data *ordered.Map) string {
	for _, k := range []string{"function", "func", "fun"} {
		if f, ok := data.Value(k).(string); ok {
			return f
		}
	}
	return ""
}

// asInt is Salt's int(value) on an entry's numbers: integers, floats
// and numeric strings.
func asInt(v any) (int, bool) {
	if n, ok := protocol.AsInt(v); ok {
		return n, true
	}
	switch x := v.(type) {
	case float64:
		return int(x), true
	case string:
		var n int
		if _, err := fmt.Sscan(x, &n); err == nil {
			return n, true
		}
	}
	return 0, false
}

// randInt is random.randint(lo, hi), inclusive.
func randInt(lo, hi int) int {
	if hi <= lo {
		return lo
	}
	n, err := rand.Int(rand.Reader, big.NewInt(int64(hi-lo+1)))
	if err != nil {
		return lo
	}
	return lo + int(n.Int64())
}
