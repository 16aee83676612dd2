package transport

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"

	"github.com/brinesalt/brine/internal/logattr"
)

// What a peer may make the master hold before it is authenticated.
//
// Salt's request channel (salt/channel/server.py ReqServerChannel)
// carries two kinds of load: "clear" ones, of which the master answers
// only _auth (a few KiB: the minion's id, public key and an encrypted
// token), and "aes" ones, sealed with the session key the master handed
// an accepted minion in its _auth reply. Only an aes load that opens
// proves the peer holds an accepted minion's key, so only the handler
// can tell; it says so with Authenticated, and the Router then trusts
// the peer's address.
//
// A peer whose address is not trusted ("fresh") may send messages of
// at most FreshMessage bytes, and every byte its messages hold past the
// first freshFree is taken from one FreshBudget shared by all fresh
// peers until a worker has answered the request. A larger message, or
// one the budget cannot take, is refused and the connection closed
// with a log line. Trusted peers may send MaxMessage bytes outside the
// budget. Either way a frame's buffer grows as its bytes arrive
// (readBody), so a header alone costs nothing.
//
// Trust is by address, not by connection, because a Salt minion opens
// a new request connection for many loads (salt/minion.py _return_pub
// creates a ReqChannel per return) whose first message may be a large
// aes load. The set only grows with authenticated peers, so it is as
// large as the set of minion addresses. An attacker sharing an address
// with an authenticated minion (same host, NAT) gets the trusted
// limits, which are still per message and grow with bytes received.
// Salt itself has no such limits: libzmq's ZMQ_MAXMSGSIZE is unset and
// salt/transport/zeromq.py allocates whatever arrives.

// DefaultFreshMessage bounds one message from a peer not yet
// authenticated; an _auth load is a few KiB.
const DefaultFreshMessage = 1 << 20

// DefaultFreshBudget bounds what all peers not yet authenticated hold
// together, past freshFree bytes of each message.
const DefaultFreshBudget = 64 << 20

// freshFree is how much of a fresh peer's message is not taken from the
// budget: no more than the read buffer every connection has anyway, and
// enough for an _auth, so fresh peers that exhaust the budget cannot
// keep a minion from signing in.
const freshFree = 64 << 10

// ErrBudget is a message refused because peers not yet authenticated
// already hold the whole shared budget.
var ErrBudget = errors.New("zmtp: memory budget for unauthenticated peers exhausted")

// budget is a byte budget shared by connections. A nil budget takes
// anything.
type budget struct{ left atomic.Int64 }

func newBudget(n int64) *budget {
	b := &budget{}
	b.left.Store(n)
	return b
}

// take reserves n bytes, or reports false and reserves nothing.
func (b *budget) take(n int64) bool {
	if b == nil {
		return true
	}
	for {
		left := b.left.Load()
		if left < n {
			return false
		}
		if b.left.CompareAndSwap(left, left-n) {
			return true
		}
	}
}

// give returns n reserved bytes.
func (b *budget) give(n int64) {
	if b != nil && n != 0 {
		b.left.Add(n)
	}
}

// routerLimits is the Router's trusted addresses and fresh budget.
type routerLimits struct {
	fresh   msgLimit // the limit of a fresh peer's messages
	trusted msgLimit // and of a trusted one's
	mu      sync.Mutex
	addrs   map[netip.Addr]struct{}
}

func newRouterLimits(o RouterOptions) *routerLimits {
	return &routerLimits{
		fresh:   msgLimit{max: min(o.FreshMessage, o.MaxMessage), budget: newBudget(o.FreshBudget), free: freshFree},
		trusted: msgLimit{max: o.MaxMessage},
		addrs:   map[netip.Addr]struct{}{},
	}
}

// applyLimitDefaults fills in FreshMessage and FreshBudget.
func (o *RouterOptions) applyLimitDefaults() {
	if o.FreshMessage <= 0 {
		o.FreshMessage = DefaultFreshMessage
	}
	if o.FreshBudget <= 0 {
		o.FreshBudget = DefaultFreshBudget
	}
}

// peerIP is the address part of a connection's remote address, the
// key trust is kept under.
func peerIP(a net.Addr) netip.Addr {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.AddrPort().Addr().Unmap()
	}
	ap, err := netip.ParseAddrPort(a.String())
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr().Unmap()
}

// limitFor is the limit for the next message from a peer at ip.
func (l *routerLimits) limitFor(ip netip.Addr) (msgLimit, bool) {
	l.mu.Lock()
	_, ok := l.addrs[ip]
	l.mu.Unlock()
	if ok {
		return l.trusted, true
	}
	return l.fresh, false
}

// trust marks ip authenticated; it reports whether it was not before.
func (l *routerLimits) trust(ip netip.Addr) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.addrs[ip]; ok || !ip.IsValid() {
		return false
	}
	l.addrs[ip] = struct{}{}
	return true
}

type authKey struct{}

// Authenticated tells the Router that the request being handled proved
// its peer authenticated (the master: an aes load that opened with an
// accepted minion's session key). Later messages from the peer's
// address may be as large as MaxMessage and no longer count against
// the budget for unauthenticated peers. Outside a Router's handler it
// does nothing.
func Authenticated(ctx context.Context) {
	if f, ok := ctx.Value(authKey{}).(func()); ok {
		f()
	}
}

// handlerContext is the context a request's handler runs with: it
// carries what Authenticated calls.
func (r *Router) handlerContext(rc *routerConn) context.Context {
	return context.WithValue(r.ctx, authKey{}, func() {
		ip := peerIP(rc.c.RemoteAddr())
		if r.lim.trust(ip) {
			r.log.Debug("request peer authenticated, full message limit", "peer", rc.id, "max_message", r.opts.MaxMessage)
		}
	})
}

// readRequest reads the next message from rc under the limit its
// address has now; charged goes back to the budget once the request is
// answered or dropped.
func (r *Router) readRequest(rc *routerConn) (frames [][]byte, cmd bool, charged int64, err error) {
	lim, trusted := r.lim.limitFor(peerIP(rc.c.RemoteAddr()))
	frames, cmd, charged, err = rc.c.recv(lim)
	if err != nil && (errors.Is(err, ErrTooLarge) || errors.Is(err, ErrBudget)) {
		r.Dropped.Add(1)
		r.log.Warn("request refused, closing connection", "peer", rc.id, "authenticated", trusted,
			"max_message", lim.max, logattr.Err, err)
	}
	return frames, cmd, charged, err
}
