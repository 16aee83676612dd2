package reactor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/fileclient"
	"github.com/brinesalt/brine/state/jinja"
)

// Salt's defaults (salt/config/__init__.py DEFAULT_MASTER_OPTS).
const (
	DefaultWorkers = 10
	DefaultHWM     = 10000
)

// Executor runs reactions; the master implements it with its publish,
// runner and wheel paths.
type Executor interface {
	React(ctx context.Context, c *Call) error
}

// Options configure a Reactor.
type Options struct {
	// Map is the parsed `reactor:` option.
	Map []Entry
	// Workers is reactor_worker_threads, HWM reactor_worker_hwm: the
	// pool's size and the most events waiting for it.
	Workers, HWM int
	// Niceness is reactor_niceness: each worker runs on an OS thread of
	// its own niced by that much (Linux; elsewhere it is logged as not
	// supported), so rendering and running reactions yields to the
	// daemon's other work.
	Niceness int
	// FileRoots resolve salt:// references and Jinja includes.
	FileRoots map[string][]string
	// Opts are the master's options, `opts` in the templates; its
	// renderer option is the render pipe.
	Opts *ordered.Map
	// Jinja are the jinja_env settings (trim_blocks, lstrip_blocks).
	Jinja jinja.Options
	// Salt is `salt` in the templates (the MasterMinion's execution
	// functions, minion-less); nil leaves it undefined. Grains gives
	// `grains` (the host's, gathered on first use); nil gives {}.
	Salt   jinja.SaltCaller
	Grains func() *ordered.Map
	Exec   Executor
	Log    *slog.Logger
}

// Stats count what the reactor did with the events it saw.
type Stats struct {
	// Matched events had a tag in the map; Queued of them were taken
	// by the pool and Dropped refused because HWM events were waiting.
	Matched, Queued, Dropped int64
	// Reactions ran and Failed of them failed; Done events are fully
	// handled.
	Reactions, Failed, Done int64
}

type event struct {
	tag  string
	data *ordered.Map
	sls  []string
}

// Reactor matches events against the map and runs their reactions in
// a bounded pool.
type Reactor struct {
	o     Options
	log   *slog.Logger
	rend  *renderer
	queue chan event

	mu      sync.RWMutex
	entries []Entry
	leader  bool

	matched, queued, dropped    atomic.Int64
	reactions, failed, finished atomic.Int64
	lastDropLog                 atomic.Int64 // unix nanoseconds
	wg                          sync.WaitGroup
	niceOnce, niceErr           sync.Once
}

// New prepares a reactor; Start runs its pool.
func New(o Options) *Reactor {
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	if o.HWM <= 0 {
		o.HWM = DefaultHWM
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Opts == nil {
		o.Opts = ordered.New()
	}
	pipe, _ := o.Opts.Value("renderer").(string)
	r := &Reactor{o: o, log: o.Log, queue: make(chan event, o.HWM), entries: o.Map, leader: true}
	r.rend = &renderer{files: fileclient.New(o.FileRoots, nil), opts: o.Opts, pipe: pipe, log: o.Log, jinjaEnv: o.Jinja,
		salt: o.Salt, grains: o.Grains}
	return r
}

// Start runs the workers until ctx ends; Wait waits for them.
func (r *Reactor) Start(ctx context.Context) {
	for range r.o.Workers {
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			r.nice()
			for {
				select {
				case <-ctx.Done():
					return
				case ev := <-r.queue:
					r.handle(ctx, ev)
				}
			}
		}()
	}
}

// nice lowers the calling worker's priority by Options.Niceness,
// logging Salt's "Reactor setting niceness" once, or why it cannot.
func (r *Reactor) nice() {
	n := r.o.Niceness
	if n == 0 {
		return
	}
	r.niceOnce.Do(func() { r.log.Info(fmt.Sprintf("Reactor setting niceness to %d", n)) })
	if err := lowerPriority(n); err != nil {
		r.niceErr.Do(func() {
			r.log.Warn("reactor_niceness not applied; the reactor runs at the daemon's priority", "reactor_niceness", n, logattr.Err, err)
		})
	}
}

// Wait waits for the workers after the context of Start ended.
func (r *Reactor) Wait() { r.wg.Wait() }

// Submit offers an event: it is queued when its tag matches the map
// and the pool has room, and never blocks. Events of the reactor's
// own jobs (user "Reactor") and reactor management tags are not
// reacted to.
func (r *Reactor) Submit(tag string, data *ordered.Map) bool {
	if data != nil && data.Value("user") == EventUser {
		return false
	}
	if strings.Contains(tag, "salt/reactors/manage") {
		// Salt's reactor takes these only with the master key; Brine's
		// reactor runners call the reactor directly instead.
		r.log.Debug("reactor management event ignored; use salt-run reactor.*", logattr.Tag, tag)
		return false
	}
	r.mu.RLock()
	leader := r.leader
	sls := Match(r.entries, tag)
	r.mu.RUnlock()
	if !leader || len(sls) == 0 {
		return false
	}
	r.matched.Add(1)
	select {
	case r.queue <- event{tag: tag, data: data, sls: sls}:
		r.queued.Add(1)
		return true
	default:
		n := r.dropped.Add(1)
		r.logDrop(tag, n)
		return false
	}
}

// logDrop logs a refused event, at most once a second during a storm,
// with the count so far (Salt logs "TaskPool queue is full!" for each).
func (r *Reactor) logDrop(tag string, total int64) {
	now := time.Now().UnixNano()
	last := r.lastDropLog.Load()
	if now-last < int64(time.Second) || !r.lastDropLog.CompareAndSwap(last, now) {
		return
	}
	r.log.Error("Reactor failed to queue the reactions of an event: TaskPool queue is full! Consider tuning reactor_worker_threads and/or reactor_worker_hwm",
		logattr.Tag, tag, "dropped", total, "reactor_worker_hwm", r.o.HWM)
}

// handle renders an event's reactions and runs them in order.
func (r *Reactor) handle(ctx context.Context, ev event) {
	defer r.finished.Add(1)
	for _, chunk := range r.rend.reactions(ctx, ev.tag, ev.data, ev.sls) {
		c, err := NewCall(chunk, r.log)
		if err != nil {
			r.failed.Add(1)
			id, kind, fun := str(chunk.Value("__id__")), str(chunk.Value("state")), str(chunk.Value("fun"))
			if errors.Is(err, ErrArgFormat) {
				r.log.Error(fmt.Sprintf("Reactor '%s' failed to execute %s '%s': Incorrect argument format, check the Reactor System documentation for the correct format.", id, kind, fun), logattr.Tag, ev.tag)
				continue
			}
			r.log.Error(fmt.Sprintf("Reactor '%s' failed to execute %s '%s'", id, kind, fun), logattr.Tag, ev.tag, logattr.Err, err)
			continue
		}
		r.reactions.Add(1)
		if err := r.o.Exec.React(ctx, c); err != nil {
			r.failed.Add(1)
			r.log.Error(fmt.Sprintf("Reactor '%s' failed to execute %s '%s'", c.ID, c.Kind, c.Fun), logattr.Tag, ev.tag, logattr.Err, err)
		}
	}
}

// Stats returns the counters so far.
func (r *Reactor) Stats() Stats {
	return Stats{Matched: r.matched.Load(), Queued: r.queued.Load(), Dropped: r.dropped.Load(),
		Reactions: r.reactions.Load(), Failed: r.failed.Load(), Done: r.finished.Load()}
}

// List is the reactor map as the reactor.list runner shows it: a list
// of {tag: sls} mappings (Reactor.list_all).
func (r *Reactor) List() []any {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := []any{}
	for _, e := range r.entries {
		sls := make([]any, len(e.SLS))
		for i, s := range e.SLS {
			sls[i] = s
		}
		var v any = sls
		if e.single {
			v = e.SLS[0]
		}
		out = append(out, ordered.FromPairs(e.Tag, v))
	}
	return out
}

// Add appends a reaction to the map unless its tag has one already
// (Reactor.add_reactor).
func (r *Reactor) Add(tag string, sls []string) *ordered.Map {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.entries {
		if e.Tag == tag {
			return ordered.FromPairs("status", false, "comment", "Reactor already exists.")
		}
	}
	r.entries = append(r.entries, Entry{Tag: tag, SLS: sls})
	return ordered.FromPairs("status", true, "comment", "Reactor added.")
}

// Delete removes the first reaction of the tag (Reactor.delete_reactor).
func (r *Reactor) Delete(tag string) *ordered.Map {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, e := range r.entries {
		if e.Tag == tag {
			r.entries = append(r.entries[:i:i], r.entries[i+1:]...)
			return ordered.FromPairs("status", true, "comment", "Reactor deleted.")
		}
	}
	return ordered.FromPairs("status", false, "comment", "Reactor does not exists.")
}

// IsLeader reports whether the reactor reacts to events; SetLeader
// switches it (reactor.is_leader, reactor.set_leader).
func (r *Reactor) IsLeader() bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.leader
}

// SetLeader sets whether the reactor reacts and returns the new value.
func (r *Reactor) SetLeader(v bool) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.leader = v
	return v
}
