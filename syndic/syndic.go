// Package syndic is salt-syndic (salt/minion.py Syndic and
// SyndicManager): on a lower master's host, a minion of one or more
// upper masters that relays every job they publish to its own master
// through the local socket, as salt does, and forwards every return of
// its master's bus upward, batched as _syndic_return, and its other
// events with the pretag syndic/<id>.
//
// Where Salt loses data Brine keeps it: returns for an upper master
// that is down are queued and sent when it is back; a job's timeout of 1
// does not stop the relay; a job that comes back to the master it
// started from (a loop of syndics) is refused with an error.
package syndic

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/brinesalt/brine/internal/crypt"
	"github.com/brinesalt/brine/internal/jobcache"
	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
	"github.com/brinesalt/brine/master"
	"github.com/brinesalt/brine/minion"
)

// ErrLoop is a syndic whose syndic_master is its own master.
var ErrLoop = errors.New("syndic loop")

// Syndic is a running salt-syndic.
type Syndic struct {
	c      *Config
	log    *slog.Logger
	uppers []*upper
	cache  *jobcache.Cache // the lower master's local_cache

	pubMu sync.Mutex
	pub   *master.Client // the local socket, for publishing

	originMu sync.Mutex
	origin   map[string]int // jid -> the upper it came from
	order    []string       // origin's jids, oldest first

	fw     *forwarder
	cancel context.CancelCauseFunc // ends Run, with why
}

// stop ends Run with err.
func (s *Syndic) stop(err error) {
	if s.cancel != nil {
		s.cancel(err)
	}
}

// New prepares a syndic: one upper link per syndic_master.
func New(c *Config, log *slog.Logger) (*Syndic, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := selfLoop(c); err != nil {
		return nil, err
	}
	s := &Syndic{c: c, log: log, cache: jobcache.New(c.Local.CacheDir), origin: map[string]int{}}
	if c.JobCache != "local_cache" {
		log.Warn("the forwarded job load is left empty: the syndic reads loads from local_cache only", "master_job_cache", c.JobCache)
	}
	for i, addr := range c.Uppers {
		mc := *c.Minion
		mc.Masters = []string{addr}
		mc.MasterURIFormat = "default" // addr is host:port, made by LoadConfig
		u := &upper{idx: i, addr: addr, s: s, kick: make(chan struct{}, 1)}
		link, err := minion.New(minion.Options{Config: &mc, Log: log.With("syndic_master", addr),
			Relay: u.relay, MasterPubName: "syndic_master.pub"})
		if err != nil {
			return nil, fmt.Errorf("new syndic: %w", err)
		}
		u.link = link
		s.uppers = append(s.uppers, u)
	}
	s.fw = newForwarder(s)
	return s, nil
}

// selfLoop refuses a syndic_master that is the lower master itself, by
// address: the request port of this host's master.
func selfLoop(c *Config) error {
	for _, addr := range c.Uppers {
		host, port, err := net.SplitHostPort(addr)
		if err != nil || port != fmt.Sprint(c.Local.RetPort) {
			continue
		}
		if localHost(host, c.Local.Interface) {
			return fmt.Errorf("syndic_master %s is this syndic's own master (ret_port %d on this host): %w", addr, c.Local.RetPort, ErrLoop)
		}
	}
	return nil
}

// localHost reports whether host names an address the local master
// listens on (its interface, or any local address when that is
// 0.0.0.0).
func localHost(host, iface string) bool {
	ips, err := net.LookupIP(host)
	if err != nil {
		return false
	}
	if iface != "0.0.0.0" && iface != "::" && iface != "" {
		want := net.ParseIP(iface)
		for _, ip := range ips {
			if ip.Equal(want) {
				return true
			}
		}
		return false
	}
	addrs, _ := net.InterfaceAddrs()
	for _, ip := range ips {
		if ip.IsLoopback() {
			return true
		}
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
				return true
			}
		}
	}
	return false
}

// Run signs in to every upper master and relays until ctx ends. A
// syndic_master found to be the lower master itself (its key is this
// master's) ends it with ErrLoop.
func (s *Syndic) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	s.cancel = cancel
	var wg sync.WaitGroup
	for _, u := range s.uppers {
		wg.Add(2)
		go func() {
			defer wg.Done()
			if err := u.link.RunRelay(ctx, u.started); err != nil {
				cancel(fmt.Errorf("syndic_master %s: %w", u.addr, err))
			}
		}()
		go func() {
			defer wg.Done()
			u.send(ctx)
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		s.fw.run(ctx)
	}()
	<-ctx.Done()
	wg.Wait()
	s.pubMu.Lock()
	if s.pub != nil {
		s.pub.Close()
	}
	s.pubMu.Unlock()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// localKey is the lower master's public key text, cleaned.
func (s *Syndic) localKey() string {
	if s.c.LocalMasterPub != "" {
		return crypt.CleanKey(s.c.LocalMasterPub)
	}
	b, err := os.ReadFile(filepath.Join(s.c.Local.PKIDir, "master.pub"))
	if err != nil {
		return ""
	}
	return crypt.CleanKey(string(b))
}

// publish republishes a job on the lower master through its local
// socket, with the job's own jid, as Syndic.syndic_cmd does.
func (s *Syndic) publish(ctx context.Context, req master.PublishRequest) ([]string, error) {
	s.pubMu.Lock()
	defer s.pubMu.Unlock()
	for attempt := 0; ; attempt++ {
		if s.pub == nil {
			c, err := master.Dial(ctx, s.c.Local.LocalSocket())
			if err != nil {
				return nil, err
			}
			s.pub = c
		}
		_, minions, err := s.pub.Publish(ctx, req)
		if err == nil {
			return minions, nil
		}
		var ae *master.AuthError
		if errors.As(err, &ae) || attempt > 0 {
			return nil, err
		}
		// The master restarted: dial again once.
		s.pub.Close()
		s.pub = nil
	}
}

// remember notes which upper a relayed job came from, keeping the
// latest few thousand.
func (s *Syndic) remember(jid string, idx int) {
	s.originMu.Lock()
	defer s.originMu.Unlock()
	if _, ok := s.origin[jid]; !ok {
		s.order = append(s.order, jid)
	}
	s.origin[jid] = idx
	for len(s.order) > 10000 {
		delete(s.origin, s.order[0])
		s.order = s.order[1:]
	}
}

// originOf is the upper a job came from, -1 for a job published on the
// lower master itself.
func (s *Syndic) originOf(jid string) int {
	s.originMu.Lock()
	defer s.originMu.Unlock()
	if i, ok := s.origin[jid]; ok {
		return i
	}
	return -1
}

// upperNamed is the index of the upper master a master_id names (its
// syndic_master entry, or that entry's host), -1 for none: the lower
// master's own jobs' returns go there first, as Salt's
// SyndicManager.iter_master_options(master_id) picks them.
func (s *Syndic) upperNamed(mid string) int {
	if mid == "" {
		return -1
	}
	for i, u := range s.uppers {
		host, _, err := net.SplitHostPort(u.addr)
		if u.addr == mid || (err == nil && host == mid) {
			return i
		}
	}
	return -1
}

// upper is one upper master: its link (a relay minion) and the queue of
// return entries waiting to be sent to it.
type upper struct {
	idx  int
	addr string
	s    *Syndic
	link *minion.Minion
	kick chan struct{}

	mu      sync.Mutex
	queue   []*ordered.Map // _syndic_return entries
	events  []any          // {tag, data} events to forward
	down    bool           // the last send failed
	failed  int            // sends failed in a row
	stopped bool
}

// started runs once the link is signed in: a master whose key is the
// lower master's own is this master (a loop), else the syndic announces
// itself (Syndic.fire_master_syndic_start).
func (u *upper) started(ctx context.Context) {
	if k := u.s.localKey(); k != "" && u.link.PinnedMasterKey() == k {
		u.s.log.Error("refusing syndic_master: its key is this master's own key, so the syndic would relay its master's jobs to itself", "syndic_master", u.addr)
		u.mu.Lock()
		u.stopped = true
		u.mu.Unlock()
		u.s.stop(fmt.Errorf("syndic_master %s is this syndic's own master (same master key): %w", u.addr, ErrLoop))
		return
	}
	id := u.s.c.ID
	msg := fmt.Sprintf("Syndic %s started at %s", id, time.Now().Format("Mon Jan _2 15:04:05 2006"))
	var evs []any
	if u.s.c.LegacyStartEvents {
		evs = append(evs, ordered.FromPairs("tag", "syndic_start", "data", ordered.FromPairs("id", id, "data", msg)))
	}
	evs = append(evs, ordered.FromPairs("tag", "salt/syndic/"+id+"/start", "data", ordered.FromPairs("id", id, "data", msg)))
	sctx, cancel := context.WithTimeout(ctx, u.s.c.Minion.ReturnRetryTimer+time.Second)
	defer cancel()
	if _, err := u.link.Send(sctx, ordered.FromPairs("id", id, "events", evs, "cmd", protocol.CmdMinionEvent)); err != nil {
		u.s.log.Warn("syndic start event not sent", "syndic_master", u.addr, logattr.Err, err)
	}
	u.s.log.Info("Syndic successfully connected", "syndic_master", u.addr)
}

// relay handles one publication of this upper master
// (Syndic._handle_decoded_payload, syndic_cmd).
func (u *upper) relay(ctx context.Context, load *ordered.Map) {
	u.mu.Lock()
	stopped := u.stopped
	u.mu.Unlock()
	if stopped {
		return
	}
	job, err := protocol.ParseJob(load)
	if err != nil {
		u.s.log.Warn("bad publication from the upper master dropped", "syndic_master", u.addr, logattr.Err, err)
		return
	}
	if own := u.s.c.Local.MasterID; own != "" && job.MasterID == own {
		// The job carries this master's own master_id: it came from here
		// (Syndic._handle_decoded_payload only forwards a command "if it
		// didn't originate from ourselves").
		u.s.log.Info("not relaying a job this master published (its master_id came back from the upper master)",
			"syndic_master", u.addr, logattr.JID, job.JID, "master_id", own)
		return
	}
	if _, err := u.s.cache.GetLoad(ctx, job.JID); err == nil {
		u.s.log.Error("refusing a job that is already on this master: the upper master is this master or below it (a syndic loop); check syndic_master",
			"syndic_master", u.addr, logattr.JID, job.JID, logattr.Fun, job.Fun)
		return
	}
	req := master.PublishRequest{Tgt: job.Tgt, TgtType: job.TgtType, Fun: job.Fun, Arg: job.Arg, Ret: job.Ret,
		User: job.User, JID: job.JID, Delimiter: job.Delimiter, MasterID: job.MasterID}
	if req.TgtType == "" {
		req.TgtType = "glob"
	}
	req.Metadata, _ = job.Kwargs.Value("metadata").(*ordered.Map)
	req.RetConfig, _ = job.Kwargs.Value("ret_config").(string)
	req.RetKwargs, _ = job.Kwargs.Value("ret_kwargs").(*ordered.Map)
	// Salt passes to-1 as the publish's own timeout, so -t 1 made the
	// relay fail (salt/minion.py Syndic._handle_decoded_payload). The
	// local socket needs no such bound: the job's to goes on, one less,
	// for a syndic further down.
	if job.To > 1 {
		req.To = job.To - 1
	} else if job.To == 1 {
		req.To = 1
	}
	u.s.remember(job.JID, u.idx)
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	minions, err := u.s.publish(pctx, req)
	if err != nil {
		u.s.log.Warn("Unable to forward pub data", "syndic_master", u.addr, logattr.JID, job.JID, logattr.Err, err)
		return
	}
	u.s.log.Info("relayed", logattr.JID, job.JID, logattr.Fun, job.Fun, "minions", len(minions))
}

// enqueue adds return entries and events for this master and wakes its
// sender.
func (u *upper) enqueue(entries []*ordered.Map, events []any) {
	u.mu.Lock()
	u.queue = append(u.queue, entries...)
	u.events = append(u.events, events...)
	if n := len(u.queue) - maxQueued; n > 0 {
		u.s.log.Error("return queue full: oldest returns dropped", "syndic_master", u.addr, "dropped", n)
		u.queue = u.queue[n:]
	}
	if n := len(u.events) - maxEvents; n > 0 {
		u.events = u.events[n:]
	}
	u.mu.Unlock()
	select {
	case u.kick <- struct{}{}:
	default:
	}
}

// maxQueued bounds the return entries kept for a master that is down
// (each entry is one job's returns of one batch); maxEvents the events.
const (
	maxQueued = 100000
	maxEvents = 10000
)

// isDown reports whether the last send to this master failed.
func (u *upper) isDown() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.down
}

// send delivers the queue until ctx ends: everything queued goes in one
// request; on failure it stays queued (returns) and is tried again
// every syndic_event_forward_timeout, at least every second.
func (u *upper) send(ctx context.Context) {
	retry := max(u.s.c.EventForwardTimeout, time.Second)
	for {
		select {
		case <-ctx.Done():
			return
		case <-u.kick:
		case <-time.After(retry):
		}
		u.flush(ctx)
	}
}

func (u *upper) flush(ctx context.Context) {
	u.mu.Lock()
	entries, events := u.queue, u.events
	u.queue, u.events = nil, nil
	u.mu.Unlock()
	if len(entries) == 0 && len(events) == 0 {
		return
	}
	id := u.s.c.ID
	timeout := u.s.c.Minion.ReturnRetryTimer + time.Second
	ok := true
	if len(events) > 0 {
		sctx, cancel := context.WithTimeout(ctx, timeout)
		_, err := u.link.Send(sctx, ordered.FromPairs("id", id, "events", events, "pretag", "syndic/"+id, "cmd", protocol.CmdMinionEvent))
		cancel()
		if err != nil {
			// Events are best effort, as Salt's _fire_master.
			u.s.log.Warn("Unable to call _fire_master", "syndic_master", u.addr, "events", len(events), logattr.Err, err)
			ok = false
		}
	}
	if len(entries) > 0 {
		list := make([]any, len(entries))
		for i, e := range entries {
			list[i] = e
		}
		sctx, cancel := context.WithTimeout(ctx, timeout)
		_, err := u.link.Send(sctx, ordered.FromPairs("cmd", protocol.CmdSyndicReturn, "load", list))
		cancel()
		if err != nil {
			ok = false
			u.s.log.Warn("returns queued: the upper master did not take them", "syndic_master", u.addr, "entries", len(entries), logattr.Err, err)
			u.mu.Lock()
			u.queue = append(entries, u.queue...)
			u.mu.Unlock()
		}
	}
	u.mu.Lock()
	u.down = !ok
	if ok {
		u.failed = 0
	} else {
		u.failed++
	}
	failed := u.failed
	u.mu.Unlock()
	if !ok && failed >= u.s.c.Retries {
		u.s.fw.reroute(u)
	}
}

// takeLocal removes the queued entries of jobs published on the lower
// master itself, which any upper may take (syndic_failover).
func (u *upper) takeLocal() []*ordered.Map {
	u.mu.Lock()
	defer u.mu.Unlock()
	var keep, take []*ordered.Map
	for _, e := range u.queue {
		jid, _ := e.Value("jid").(string)
		if u.s.originOf(jid) < 0 {
			take = append(take, e)
		} else {
			keep = append(keep, e)
		}
	}
	u.queue = keep
	return take
}
