package netapi

import (
	"strings"
	"sync"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/py"
	"github.com/brinesalt/brine/master"
)

// hub fans the master's event stream out to salt-api's subscribers: one
// subscription on the master's local socket, whatever the number of
// /events, /ws and job listeners. A subscriber whose buffer is full is
// dropped (its channel closed), never waited on, so one stalled reader
// cannot delay the others or the master.
type hub struct {
	mu   sync.Mutex
	subs map[*subscriber]struct{}
	done bool
}

func newHub() *hub { return &hub{subs: map[*subscriber]struct{}{}} }

// hubEvent is an event with its JSON rendering made once for every
// stream that sends it.
type hubEvent struct {
	master.Event
	once sync.Once
	json []byte
}

// JSON is salt.utils.json.dumps({"data": ..., "tag": ...}), the payload
// /events and /ws send (iter_events(full=True) gives {"data", "tag"}).
func (e *hubEvent) JSON() []byte {
	e.once.Do(func() {
		full := ordered.FromPairs("data", e.Data, "tag", e.Tag)
		s, err := py.JSON(full, py.JSONOptions{Indent: -1})
		if err != nil {
			s = `{"data": {}, "tag": ` + py.QuoteJSON(e.Tag, false) + `}`
		}
		e.json = []byte(s)
	})
	return e.json
}

// subscriber is one listener. Streams take every event; a job listener
// (jobs true) takes only the job, runner and wheel events of the jobs it
// watches, and all of them while a publish it waits on is in flight,
// since a return can come before the master's answer names the jid.
type subscriber struct {
	ch   chan *hubEvent    // a stream's events
	evs  chan master.Event // a job listener's events (client.Session)
	jobs bool

	mu      sync.Mutex
	pending int
	jids    map[string]bool
}

// subscribe adds a listener with a buffer of n events.
func (h *hub) subscribe(n int, jobs bool) *subscriber {
	s := &subscriber{jobs: jobs, jids: map[string]bool{}}
	if jobs {
		s.evs = make(chan master.Event, n)
	} else {
		s.ch = make(chan *hubEvent, n)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.done {
		s.close()
		return s
	}
	h.subs[s] = struct{}{}
	return s
}

// unsubscribe removes a listener; its channel is closed.
func (h *hub) unsubscribe(s *subscriber) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.subs[s]; ok {
		delete(h.subs, s)
		s.close()
	}
}

// fire hands an event to every listener that wants it, dropping those
// that cannot take it now.
func (h *hub) fire(ev master.Event) {
	he := &hubEvent{Event: ev}
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		if s.wants(ev.Tag) && !s.offer(he) {
			delete(h.subs, s)
			s.close()
		}
	}
}

// run forwards the master's events until the stream ends, then closes
// every listener: the master went away.
func (h *hub) run(events <-chan master.Event) {
	for ev := range events {
		h.fire(ev)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.done = true
	for s := range h.subs {
		delete(h.subs, s)
		s.close()
	}
}

// count is the number of listeners.
func (h *hub) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

// offer queues an event without waiting; false means the buffer is full.
func (s *subscriber) offer(he *hubEvent) bool {
	if s.jobs {
		select {
		case s.evs <- he.Event:
			return true
		default:
			return false
		}
	}
	select {
	case s.ch <- he:
		return true
	default:
		return false
	}
}

func (s *subscriber) close() {
	if s.jobs {
		close(s.evs)
	} else {
		close(s.ch)
	}
}

func (s *subscriber) wants(tag string) bool {
	if !s.jobs {
		return true
	}
	jid, ok := tagJID(tag)
	if !ok {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pending > 0 || s.jids[jid]
}

// begin marks a publish in flight; end names its jid ("" when it failed).
func (s *subscriber) begin() {
	s.mu.Lock()
	s.pending++
	s.mu.Unlock()
}

func (s *subscriber) end(jid string) {
	s.mu.Lock()
	s.pending--
	if jid != "" {
		s.jids[jid] = true
	}
	s.mu.Unlock()
}

// tagJID is the jid of a job, runner or wheel event tag
// (salt/job/<jid>/..., salt/run/<jid>/..., salt/wheel/<jid>/...), also
// as a master of masters fires a syndic's with the pretag
// syndic/<id>/…, and of a job's bare <jid> event (its minion list;
// from a syndic, the lower tier's, which master.Tiers reads).
func tagJID(tag string) (string, bool) {
	for {
		rest, ok := strings.CutPrefix(tag, "syndic/")
		if !ok {
			break
		}
		if _, tag, ok = strings.Cut(rest, "/"); !ok {
			return "", false
		}
	}
	if tag != "" && !strings.Contains(tag, "/") {
		return tag, true
	}
	for _, p := range []string{"salt/job/", "salt/run/", "salt/wheel/"} {
		if rest, ok := strings.CutPrefix(tag, p); ok {
			jid, _, _ := strings.Cut(rest, "/")
			return jid, true
		}
	}
	return "", false
}
