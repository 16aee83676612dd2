package transport

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brinesalt/brine/internal/logattr"
)

// Handler answers one request body; a nil reply sends nothing (the
// requester times out, as Salt's master does for loads it drops).
type Handler func(ctx context.Context, peer string, body []byte) []byte

// RouterOptions configure a Router.
type RouterOptions struct {
	// Workers is the number of concurrent handlers (worker_threads).
	Workers int
	// Queue bounds requests waiting for a worker (default 65,536). Each
	// connection also has at most PerPeer requests queued or in a
	// worker; past that only that connection waits (back-pressure on
	// that peer only). Since a REQ peer has one request at a time, every
	// connection's request is queued at once and its reader goes back to
	// reading, so it sees the peer leave and the request is skipped
	// (a minion that timed out waiting retries on a new connection; a
	// master that answered the stale requests of thousands of such
	// minions would never catch up).
	Queue int
	// MaxMessage bounds one request; a larger one closes the connection.
	MaxMessage int
	// FreshMessage bounds one request from a peer not yet authenticated
	// (default DefaultFreshMessage), FreshBudget what all such peers
	// hold together (default DefaultFreshBudget); see limits.go.
	FreshMessage int
	FreshBudget  int64
	// BindRetry is how long to retry a bind to an address in use
	// (0: DefaultBindRetry, negative: none).
	BindRetry time.Duration
	Log       *slog.Logger
}

// Router is the master's ROUTER socket on ret_port feeding a bounded
// worker pool, in place of Salt's ROUTER → DEALER → MWorker REP chain.
type Router struct {
	ln    net.Listener
	opts  RouterOptions
	log   *slog.Logger
	h     Handler
	tasks chan task
	wg    sync.WaitGroup
	ctx   context.Context
	stop  context.CancelFunc
	mu    sync.Mutex
	conns map[*routerConn]struct{}
	seq   atomic.Int64
	lim   *routerLimits
	// idents holds the peers that announced a routing id (ZMQ_IDENTITY),
	// so a second connection with one already connected is ignored.
	idents map[string]*routerConn
	// Dropped counts malformed or oversized requests.
	Dropped atomic.Int64
	// Skipped counts requests whose peer left before a worker got to them.
	Skipped atomic.Int64
	// Duplicates counts connections ignored because another connected
	// peer holds their routing id.
	Duplicates atomic.Int64
}

// PerPeer is how many requests one connection may have queued or in a
// worker at once.
const PerPeer = 4

type routerConn struct {
	c     *Conn
	id    string
	slots chan struct{} // PerPeer tokens: a request holds one until answered
	mu    sync.Mutex
	// gone is set when the peer disconnected: its queued requests are
	// skipped, since nobody waits for their replies (a minion that timed
	// out retries on a new connection).
	gone atomic.Bool
}

type task struct {
	rc       *routerConn
	envelope [][]byte
	body     []byte
	charged  int64 // taken from the fresh budget until answered
}

// ListenRouter binds a ROUTER socket on addr and starts the workers.
func ListenRouter(ctx context.Context, addr string, o RouterOptions, h Handler) (*Router, error) {
	if o.Workers <= 0 {
		o.Workers = 5
	}
	if o.Queue <= 0 {
		o.Queue = 1 << 16
	}
	if o.MaxMessage <= 0 {
		o.MaxMessage = DefaultMaxMessage
	}
	o.applyLimitDefaults()
	ln, err := listen(ctx, addr, "request", o.BindRetry, logger(o.Log))
	if err != nil {
		return nil, err
	}
	r := &Router{ln: ln, opts: o, log: logger(o.Log), h: h, tasks: make(chan task, o.Queue), conns: map[*routerConn]struct{}{},
		lim: newRouterLimits(o), idents: map[string]*routerConn{}}
	r.ctx, r.stop = context.WithCancel(ctx)
	for range o.Workers {
		r.wg.Add(1)
		go r.work()
	}
	r.wg.Add(1)
	go r.accept()
	return r, nil
}

// Addr is the bound address.
func (r *Router) Addr() net.Addr { return r.ln.Addr() }

func (r *Router) accept() {
	defer r.wg.Done()
	for {
		nc, err := r.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			r.log.Warn("request accept", logattr.Err, err)
			time.Sleep(50 * time.Millisecond)
			continue
		}
		r.wg.Add(1)
		go r.serve(nc)
	}
}

func (r *Router) serve(nc net.Conn) {
	defer r.wg.Done()
	setKeepAlive(nc)
	id := []byte("\x00" + strconv.FormatInt(r.seq.Add(1), 10))
	c, err := Handshake(nc, TypeROUTER, id, r.opts.MaxMessage, HandshakeTimeout)
	if err != nil {
		r.log.Debug("request handshake refused", "peer", nc.RemoteAddr().String(), logattr.Err, err)
		r.Dropped.Add(1)
		nc.Close()
		return
	}
	c.SetWriteTimeout(30 * time.Second)
	rc := &routerConn{c: c, id: nc.RemoteAddr().String(), slots: make(chan struct{}, PerPeer)}
	ident := c.Peer["Identity"]
	if !r.register(rc, ident) {
		r.ignore(rc, ident)
		return
	}
	defer func() {
		rc.gone.Store(true)
		r.mu.Lock()
		delete(r.conns, rc)
		if ident != "" && r.idents[ident] == rc {
			delete(r.idents, ident)
		}
		r.mu.Unlock()
		c.Close()
	}()
	for {
		frames, cmd, charged, err := r.readRequest(rc)
		if err != nil {
			if errors.Is(err, ErrProtocol) {
				r.Dropped.Add(1)
				r.log.Warn("request refused, closing connection", "peer", rc.id, logattr.Err, err)
			}
			return
		}
		if cmd {
			continue
		}
		// A REQ peer sends ["", body]; a DEALER may send the same or
		// [body]. The envelope is everything up to the empty delimiter.
		env, body, ok := splitEnvelope(frames)
		if !ok {
			r.lim.fresh.budget.give(charged)
			r.Dropped.Add(1)
			r.log.Warn("malformed request dropped", "peer", rc.id, "frames", len(frames))
			continue
		}
		select {
		case rc.slots <- struct{}{}:
		case <-r.ctx.Done():
			return
		}
		select {
		case r.tasks <- task{rc: rc, envelope: env, body: body, charged: charged}:
		case <-r.ctx.Done():
			return
		}
	}
}

// register adds a connection, refusing it when another connected peer
// already holds its non-empty routing id.
func (r *Router) register(rc *routerConn, ident string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ident != "" {
		if _, held := r.idents[ident]; held {
			return false
		}
		r.idents[ident] = rc
	}
	r.conns[rc] = struct{}{}
	return true
}

// ignore serves a peer whose routing id another connection holds as
// libzmq's ROUTER does with ZMQ_ROUTER_HANDOVER off (its default;
// src/router.cpp identify_peer "Ignore peers with duplicate ID"): the
// connection stays open but nothing it sends is routed or answered, so
// its requests time out. Salt's minion never sets an identity on its
// request socket (salt/transport/zeromq.py sets it on SUB only), so
// only a client that does meets this.
func (r *Router) ignore(rc *routerConn, ident string) {
	r.Duplicates.Add(1)
	r.log.Warn("request peer ignored: its identity is held by another connection", "peer", rc.id, "identity", ident)
	r.mu.Lock()
	r.conns[rc] = struct{}{}
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.conns, rc)
		r.mu.Unlock()
		rc.c.Close()
	}()
	for {
		if _, _, err := rc.c.Recv(); err != nil {
			return
		}
	}
}

func splitEnvelope(frames [][]byte) (env [][]byte, body []byte, ok bool) {
	for i, f := range frames {
		if len(f) == 0 {
			if i != len(frames)-2 {
				return nil, nil, false
			}
			return frames[:i+1], frames[i+1], true
		}
	}
	if len(frames) == 1 {
		return nil, frames[0], true
	}
	return nil, nil, false
}

func (r *Router) work() {
	defer r.wg.Done()
	for {
		select {
		case <-r.ctx.Done():
			return
		case t := <-r.tasks:
			r.handle(t)
			r.lim.fresh.budget.give(t.charged)
			<-t.rc.slots
		}
	}
}

// handle answers one request unless its peer has left.
func (r *Router) handle(t task) {
	if t.rc.gone.Load() {
		r.Skipped.Add(1)
		return
	}
	reply := r.h(r.handlerContext(t.rc), t.rc.id, t.body)
	if reply == nil {
		return
	}
	msg := append(append([][]byte{}, t.envelope...), reply)
	t.rc.mu.Lock()
	err := t.rc.c.Send(msg, false)
	t.rc.mu.Unlock()
	if err != nil {
		r.log.Debug("reply not sent", "peer", t.rc.id, logattr.Err, err)
	}
}

// Close stops accepting, closes every connection and waits for the
// workers.
func (r *Router) Close() error {
	err := r.ln.Close()
	r.stop()
	r.mu.Lock()
	for rc := range r.conns {
		rc.c.Close()
	}
	r.mu.Unlock()
	r.wg.Wait()
	return err
}
