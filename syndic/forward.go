package syndic

import (
	"context"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/brinesalt/brine/internal/jobcache"
	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/master"
)

// forwarder is SyndicManager's event half (_process_event,
// _forward_events): it reads the lower master's bus, gathers each job's
// returns and the other events, and every syndic_event_forward_timeout
// hands them to the upper masters' queues. The event that carries a
// job's minion list is handed on at once, so the top learns the tier's
// expected minions without waiting (Salt batches it with the rest).
type forwarder struct {
	s   *Syndic
	now chan struct{}

	mu      sync.Mutex
	rets    map[int]map[string]*jobRets // route (upper index, -1 any) -> jid
	order   map[int][]string            // each route's jids in arrival order
	events  []any
	sent    map[string]bool // jid_forward_cache: jids whose load went up
	sentOrd []string
}

// jobRets are one job's returns gathered for one batch.
type jobRets struct {
	fun  any
	out  any
	rets *ordered.Map // minion id -> {return, retcode, success, fun_args}
	load *ordered.Map // the job's load, the first time only
	mid  any          // master_id
}

func newForwarder(s *Syndic) *forwarder {
	return &forwarder{s: s, now: make(chan struct{}, 1),
		rets: map[int]map[string]*jobRets{}, order: map[int][]string{}, sent: map[string]bool{}}
}

// run subscribes to the lower master's events and forwards them until
// ctx ends, dialling the local socket again when the master restarts.
func (f *forwarder) run(ctx context.Context) {
	tick := time.NewTicker(f.s.c.EventForwardTimeout)
	defer tick.Stop()
	for ctx.Err() == nil {
		ch, closeFn, err := f.subscribe(ctx)
		if err != nil {
			f.s.log.Warn("cannot reach the local master's event bus; retrying", logattr.Err, err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
				continue
			}
		}
		f.loop(ctx, ch, tick.C)
		closeFn()
	}
}

func (f *forwarder) subscribe(ctx context.Context) (<-chan master.Event, func(), error) {
	c, err := master.Dial(ctx, f.s.c.Local.LocalSocket())
	if err != nil {
		return nil, nil, err
	}
	ch, err := c.Events(ctx)
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	return ch, func() { c.Close() }, nil
}

func (f *forwarder) loop(ctx context.Context, ch <-chan master.Event, tick <-chan time.Time) {
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-ch:
			if !ok {
				return
			}
			f.event(ctx, ev.Tag, ev.Data)
		case <-f.now:
			f.forward(ctx)
		case <-tick:
			f.forward(ctx)
		}
	}
}

// event is _process_event for one event of the lower master.
func (f *forwarder) event(ctx context.Context, tag string, data *ordered.Map) {
	if data == nil {
		data = ordered.New()
	}
	parts := strings.Split(tag, "/")
	jobEvent := len(parts) >= 4 && parts[0] == "salt" && parts[1] == "job" && jobcache.IsJID(parts[2])
	if jobEvent && parts[3] == "ret" && data.Has("return") {
		f.addReturn(ctx, data)
		return
	}
	minionsList := data.Has("minions") && (jobcache.IsJID(tag) || (jobEvent && parts[3] == "new"))
	if f.s.c.Mode == "cluster" && !(jobcache.IsJID(tag) && data.Has("minions")) {
		// cluster: only publishes and returns, and the minion list.
		return
	}
	if data.Has("retcode") {
		return
	}
	f.mu.Lock()
	f.events = append(f.events, ordered.FromPairs("data", data, "tag", tag))
	f.mu.Unlock()
	if minionsList {
		select {
		case f.now <- struct{}{}:
		default:
		}
	}
}

// addReturn gathers one minion's return under its job.
func (f *forwarder) addReturn(ctx context.Context, data *ordered.Map) {
	jid, ok := data.Value("jid").(string)
	id, _ := data.Value("id").(string)
	if !ok || id == "" {
		return
	}
	mid, _ := data.Value("master_id").(string)
	if own := f.s.c.Local.MasterID; f.s.c.Mode == "cluster" && own != "" && mid == own {
		// cluster mode: this master's own job, returned to it already.
		f.s.log.Debug("Return received with matching master_id, not forwarding", logattr.JID, jid, "id", id)
		return
	}
	route := f.s.originOf(jid)
	if route < 0 {
		route = f.s.upperNamed(mid)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	byJID := f.rets[route]
	if byJID == nil {
		byJID = map[string]*jobRets{}
		f.rets[route] = byJID
	}
	jr := byJID[jid]
	if jr == nil {
		jr = &jobRets{fun: data.Value("fun"), rets: ordered.New()}
		if !f.sent[jid] {
			jr.load = f.jobLoad(ctx, jid)
			f.markSent(jid)
		}
		byJID[jid] = jr
		f.order[route] = append(f.order[route], jid)
	}
	if v, ok := data.Get("master_id"); ok {
		jr.mid = v
	}
	if jr.out == nil {
		if o, ok := data.Value("out").(string); ok {
			jr.out = o
		}
	}
	ret := ordered.New()
	for _, k := range []string{"return", "retcode", "success", "fun_args"} {
		if v, ok := data.Get(k); ok {
			ret.Set(k, v)
		}
	}
	jr.rets.Set(id, ret)
}

// jobLoad is the job's load from the lower master's job cache (Salt
// reads master_job_cache.get_load), empty when it cannot be read.
func (f *forwarder) jobLoad(ctx context.Context, jid string) *ordered.Map {
	if f.s.c.JobCache != "local_cache" {
		return ordered.New()
	}
	l, err := f.s.cache.GetLoad(ctx, jid)
	if err != nil {
		return ordered.New()
	}
	return l
}

// markSent is the jid_forward_cache with its high-water mark
// syndic_jid_forward_cache_hwm: past it, the oldest jid is forgotten.
func (f *forwarder) markSent(jid string) {
	f.sent[jid] = true
	f.sentOrd = append(f.sentOrd, jid)
	if len(f.sentOrd) > f.s.c.JIDForwardCacheHWM {
		sort.Strings(f.sentOrd)
		delete(f.sent, f.sentOrd[0])
		f.sentOrd = f.sentOrd[1:]
	}
}

// forward is _forward_events: the gathered events go to every upper
// master, each job's returns to the master it came from, or for a job
// of the lower master's own to the first master in syndic_failover
// order that is not down.
func (f *forwarder) forward(context.Context) {
	f.mu.Lock()
	events := f.events
	rets, order := f.rets, f.order
	f.events, f.rets, f.order = nil, map[int]map[string]*jobRets{}, map[int][]string{}
	f.mu.Unlock()
	for route, byJID := range rets {
		var entries []*ordered.Map
		for _, jid := range order[route] {
			entries = append(entries, f.entry(jid, byJID[jid]))
		}
		f.pick(route).enqueue(entries, nil)
	}
	if len(events) > 0 {
		for _, u := range f.s.uppers {
			u.enqueue(nil, events)
		}
	}
}

// entry is one _syndic_return entry as Minion._return_pub_multi builds
// it: arg, tgt and tgt_type are None there (the gathered returns carry
// none), load is the job's load the first time and {} after.
func (f *forwarder) entry(jid string, jr *jobRets) *ordered.Map {
	load := jr.load
	if load == nil {
		load = ordered.New()
	}
	e := ordered.FromPairs("id", f.s.c.ID, "jid", jid, "fun", jr.fun, "arg", nil, "tgt", nil, "tgt_type", nil,
		"load", load, "return", jr.rets)
	if jr.mid != nil {
		e.Set("master_id", jr.mid)
	}
	if jr.out != nil {
		e.Set("out", jr.out)
	}
	return e
}

// pick is the upper master a route's returns go to.
func (f *forwarder) pick(route int) *upper {
	if route >= 0 && route < len(f.s.uppers) {
		return f.s.uppers[route]
	}
	cands := f.failoverOrder(nil)
	for _, u := range cands {
		if !u.isDown() {
			return u
		}
	}
	return cands[0]
}

// failoverOrder is iter_master_options: the upper masters, shuffled
// for syndic_failover random, without skip.
func (f *forwarder) failoverOrder(skip *upper) []*upper {
	var out []*upper
	for _, u := range f.s.uppers {
		if u != skip {
			out = append(out, u)
		}
	}
	if f.s.c.Failover == "random" {
		rand.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	}
	return out
}

// reroute moves the lower master's own jobs' returns from an upper that
// failed syndic_retries times to another that is up; a relayed job's
// returns stay queued for the master that published it.
func (f *forwarder) reroute(from *upper) {
	others := f.failoverOrder(from)
	i := slices.IndexFunc(others, func(u *upper) bool { return !u.isDown() })
	if i < 0 {
		return
	}
	if moved := from.takeLocal(); len(moved) > 0 {
		f.s.log.Info("returns moved to another syndic_master", "from", from.addr, "to", others[i].addr, "entries", len(moved))
		others[i].enqueue(moved, nil)
	}
}
