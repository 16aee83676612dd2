package master

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/brinesalt/brine/internal/jobcache"
	// The database job caches register themselves: mysql, pgjsonb.
	_ "github.com/brinesalt/brine/internal/jobcache/sqlcache"
	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
	"github.com/brinesalt/brine/state/compile"
	"github.com/brinesalt/brine/state/modules"
)

// jobCaches is where the master keeps jobs (salt/daemons/masterapi.py,
// salt/utils/job.py): master_job_cache (local_cache by default, the
// file cache under cachedir/jobs), ext_job_cache (a returner the
// minions write to themselves; the master keeps only the loads there)
// and the event_return returners the bus is persisted through.
type jobCaches struct {
	mu      sync.RWMutex
	main    jobcache.Store // nil until Start: the file cache
	ext     jobcache.Store
	extName string
	// keepReturns is job_cache without ext_job_cache: the master stores
	// the returns it receives.
	keepReturns bool
	unique      bool
	// ctx is the master's, from Start: the writes of callers that have
	// none of their own (Publish) run under it.
	ctx    context.Context
	opened []jobcache.Store
	events []namedEvents
	evDone chan struct{}
	evStop context.CancelFunc
}

type namedEvents struct {
	name string
	r    jobcache.EventReturner
}

// optBool is an option that is true unless set falsy.
func (m *Master) optBool(key string, def bool) bool {
	v, ok := m.o.Raw.Get(key)
	if !ok || v == nil {
		return def
	}
	return modules.Truthy(v)
}

func (m *Master) optString(key string) string {
	s, _ := m.o.Raw.Value(key).(string)
	return strings.TrimSpace(s)
}

// storeConfig is how the master opens a store.
func (m *Master) storeConfig() jobcache.Config {
	c := jobcache.Config{
		Lookup:   func(key string) any { return m.o.Raw.Value(key) },
		CacheDir: m.o.CacheDir, MasterID: m.ID(),
		UniqueJID: m.optBool("unique_jid", false), ArchiveJobs: m.optBool("archive_jobs", false),
		KeepJobs: m.o.KeepJobs, Log: m.log,
	}
	if n, ok := protocol.AsInt(m.o.Raw.Value("job_cache_spool_max_bytes")); ok && n > 0 {
		c.SpoolMax = int64(n)
	}
	return c
}

// openStore opens a store by returner name; local_cache is the
// master's own file cache.
func (m *Master) openStore(ctx context.Context, name string) (jobcache.Store, error) {
	if name == "" || name == "local_cache" {
		return m.jobs, nil
	}
	st, err := jobcache.Open(ctx, name, m.storeConfig())
	if err != nil {
		return nil, err
	}
	m.jc.opened = append(m.jc.opened, st)
	return st, nil
}

// startJobCaches opens the configured job caches and starts the event
// returner. A database that is down does not stop the master: its
// store keeps the writes on disk and says so once.
func (m *Master) startJobCaches(ctx context.Context) error {
	jc := &m.jc
	jc.mu.Lock()
	defer jc.mu.Unlock()
	jc.ctx = ctx
	m.jobs.UniqueJID = m.optBool("unique_jid", false)
	jc.unique = m.jobs.UniqueJID
	main, err := m.openStore(ctx, m.optString("master_job_cache"))
	if err != nil {
		return fmt.Errorf("master_job_cache: %w", err)
	}
	jc.main = main
	if jc.extName = m.optString("ext_job_cache"); jc.extName != "" {
		if jc.ext, err = m.openStore(ctx, jc.extName); err != nil {
			return fmt.Errorf("ext_job_cache: %w", err)
		}
	}
	jc.keepReturns = m.optBool("job_cache", true) && jc.extName == ""
	m.log.Info("job cache", "master_job_cache", main.Name(), "ext_job_cache", jc.extName)
	return m.startEventReturn(ctx)
}

// stopJobCaches flushes the event returner and closes the stores, which
// write out what they buffered.
func (m *Master) stopJobCaches() {
	jc := &m.jc
	if jc.evStop != nil {
		jc.evStop()
		<-jc.evDone
		jc.evStop = nil
	}
	jc.mu.Lock()
	defer jc.mu.Unlock()
	for _, st := range jc.opened {
		if err := st.Close(); err != nil {
			m.log.Warn("close job cache", "returner", st.Name(), logattr.Err, err)
		}
	}
	jc.opened, jc.main, jc.ext = nil, nil, nil
}

// baseContext is the master's context for work without one of its own.
func (m *Master) baseContext() context.Context {
	m.jc.mu.RLock()
	defer m.jc.mu.RUnlock()
	if m.jc.ctx == nil {
		return context.TODO() // not started: Publish fails on the closed socket anyway
	}
	return m.jc.ctx
}

// store is master_job_cache.
func (m *Master) store() jobcache.Store {
	m.jc.mu.RLock()
	defer m.jc.mu.RUnlock()
	if m.jc.main == nil {
		return m.jobs
	}
	return m.jc.main
}

// readStore is salt/runners/jobs.py _get_returner((ext_job_cache,
// ext_source, master_job_cache)): the first one named. A store the
// master has not open is opened for the call; done closes it.
func (m *Master) readStore(ctx context.Context, extSource string) (st jobcache.Store, done func(), err error) {
	m.jc.mu.RLock()
	ext := m.jc.ext
	m.jc.mu.RUnlock()
	nop := func() {}
	switch {
	case ext != nil:
		return ext, nop, nil
	case extSource == "" || extSource == m.store().Name():
		return m.store(), nop, nil
	case extSource == "local_cache":
		return m.jobs, nop, nil
	}
	c := m.storeConfig()
	c.Direct = true
	st, err = jobcache.Open(ctx, extSource, c)
	if err != nil {
		return nil, nop, err
	}
	return st, func() { st.Close() }, nil
}

// newJID is prep_jid of master_job_cache for a new job.
func (m *Master) newJID(ctx context.Context) string {
	jid, err := m.store().PrepJID(ctx, "")
	if err != nil {
		m.log.Warn("prep_jid", "returner", m.store().Name(), logattr.Err, err)
		return jobcache.NewJID(m.jc.unique)
	}
	return jid
}

// withExtJobCache is LocalClient.pub's ret with ext_job_cache added, so
// the minions return to it themselves.
func (m *Master) withExtJobCache(ret string) string {
	m.jc.mu.RLock()
	defer m.jc.mu.RUnlock()
	if m.jc.extName == "" {
		return ret
	}
	if ret == "" {
		return m.jc.extName
	}
	return ret + "," + m.jc.extName
}

// saveJobLoad is ClearFuncs.publish's save_load: into ext_job_cache
// when there is one, and always into master_job_cache.
func (m *Master) saveJobLoad(ctx context.Context, jid string, load *ordered.Map, minions []string) {
	m.jc.mu.RLock()
	ext := m.jc.ext
	m.jc.mu.RUnlock()
	if ext != nil {
		if err := ext.SaveLoad(ctx, jid, load, minions); err != nil {
			m.log.Error("The specified returner threw a stack trace", "returner", ext.Name(), logattr.JID, jid, logattr.Err, err)
		}
	}
	if err := m.store().SaveLoad(ctx, jid, load, minions); err != nil {
		m.log.Warn("job cache", "returner", m.store().Name(), logattr.JID, jid, logattr.Err, err)
	}
}

// storeReturn is the job-cache half of AESFuncs._return (store_job): a
// standalone job (jid "req") gets a jid and its load first; then,
// unless job_cache is off or ext_job_cache has the returns, the return
// goes into master_job_cache as Salt keeps it (the load as the minion
// sent it, with the event's _stamp). It returns the jid the return
// belongs to.
func (m *Master) storeReturn(ctx context.Context, load *ordered.Map, r *protocol.Return) (string, error) {
	st := m.store()
	full := load.Copy()
	full.Delete("ts")
	if r.JID == "req" {
		jid, err := st.PrepJID(ctx, "")
		if err != nil {
			return r.JID, err
		}
		r.JID = jid
		full.Set("jid", jid)
		jl := full.Copy()
		jl.Set("arg", orList(r.FunArgs))
		jl.Set("tgt_type", "glob")
		jl.Set("tgt", r.ID)
		if err := st.SaveLoad(ctx, jid, jl, []string{r.ID}); err != nil {
			return jid, err
		}
	}
	m.jc.mu.RLock()
	keep := m.jc.keepReturns || m.jc.main == nil
	m.jc.mu.RUnlock()
	if !keep {
		return r.JID, nil
	}
	full.Set("_stamp", protocol.EventStamp(time.Now()))
	return r.JID, st.Returner(ctx, full)
}

// cleanJobs is clean_old_jobs of master_job_cache, keep_jobs_seconds.
func (m *Master) cleanJobs(ctx context.Context) {
	st := m.store()
	n, err := st.CleanOldJobs(ctx, m.o.KeepJobs)
	if err != nil {
		m.log.Warn("clean job cache", "returner", st.Name(), logattr.Err, err)
	} else if n > 0 {
		m.log.Info("cleaned job cache", "returner", st.Name(), "removed", n)
	}
}

// cleanInterval is how often clean_old_jobs runs: loop_interval (60 s,
// salt/master.py Maintenance) for a database, whose clean-up is one
// query; hourly for the file cache, which walks every job directory.
func (m *Master) cleanInterval() time.Duration {
	if m.store() == jobcache.Store(m.jobs) {
		return time.Hour
	}
	if n, ok := protocol.AsInt(m.o.Raw.Value("loop_interval")); ok && n > 0 {
		return time.Duration(n) * time.Second
	}
	return 60 * time.Second
}

// eventFilter is EventReturn._filter: with a whitelist only the tags it
// matches, never those the blacklist matches (fnmatch patterns).
type eventFilter struct{ white, black []string }

func (f eventFilter) keep(tag string) bool {
	ok := len(f.white) == 0
	for _, p := range f.white {
		if compile.Fnmatch(tag, p) {
			ok = true
			break
		}
	}
	for _, p := range f.black {
		if compile.Fnmatch(tag, p) {
			return false
		}
	}
	return ok
}

// stringList is an option that is a string or a list of strings.
func stringList(v any) []string {
	switch x := v.(type) {
	case string:
		if x == "" {
			return nil
		}
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			if s, ok := e.(string); ok && s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// startEventReturn starts salt/utils/event.py EventReturn when
// event_return names returners: every bus event the filters pass is
// queued and sent in batches of event_return_queue (0: each at once),
// or when the oldest waited event_return_queue_max_seconds.
func (m *Master) startEventReturn(ctx context.Context) error {
	names := stringList(m.o.Raw.Value("event_return"))
	if len(names) == 0 {
		return nil
	}
	jc := &m.jc
	for _, n := range names {
		var st jobcache.Store
		switch {
		case jc.main != nil && n == jc.main.Name():
			st = jc.main
		default:
			var err error
			if st, err = m.openStore(ctx, n); err != nil {
				return fmt.Errorf("event_return: %w", err)
			}
		}
		er, ok := st.(jobcache.EventReturner)
		if !ok {
			m.log.Error("Could not store return for event(s) - returner not found.", "returner", n+".event_return")
			continue
		}
		jc.events = append(jc.events, namedEvents{name: n, r: er})
	}
	if len(jc.events) == 0 {
		return nil
	}
	queue, _ := protocol.AsInt(m.o.Raw.Value("event_return_queue"))
	maxAge, _ := protocol.AsInt(m.o.Raw.Value("event_return_queue_max_seconds"))
	f := eventFilter{white: stringList(m.o.Raw.Value("event_return_whitelist")), black: stringList(m.o.Raw.Value("event_return_blacklist"))}
	ch, unsub := m.bus.Subscribe()
	ectx, cancel := context.WithCancel(ctx)
	jc.evStop, jc.evDone = cancel, make(chan struct{})
	go m.eventReturn(ectx, ch, unsub, queue, time.Duration(maxAge)*time.Second, f, jc.events)
	m.bus.Fire("salt/event_listen/start", nil)
	return nil
}

// eventReturn is EventReturn.run; what is queued when it stops is
// flushed.
func (m *Master) eventReturn(ctx context.Context, ch <-chan Event, unsub func(), queue int, maxAge time.Duration, f eventFilter, rs []namedEvents) {
	defer close(m.jc.evDone)
	defer unsub()
	var q []jobcache.Event
	var oldest time.Time
	flush := func() {
		for _, r := range rs {
			if err := r.r.EventReturn(context.WithoutCancel(ctx), q); err != nil {
				m.log.Error("Could not store events - returner raised exception", "returner", r.name, logattr.Err, err)
			}
		}
		q, oldest = nil, time.Time{}
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			if len(q) > 0 {
				flush()
			}
			return
		case <-tick.C:
			if maxAge > 0 && len(q) > 0 && time.Since(oldest) >= maxAge {
				flush()
			}
		case ev := <-ch:
			if !f.keep(ev.Tag) {
				continue
			}
			if len(q) == 0 {
				oldest = time.Now()
			}
			q = append(q, jobcache.Event{Tag: ev.Tag, Data: ev.Data})
			if len(q) >= queue || (maxAge > 0 && time.Since(oldest) >= maxAge) {
				flush()
			}
		}
	}
}

// errNoJID is a runner call without its jid.
var errNoJID = errors.New("a jid is required")
