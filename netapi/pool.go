package netapi

import (
	"context"
	"sync"

	"github.com/brinesalt/brine/master"
)

// pool keeps idle connections to the master's local socket for
// requests: each master.Client carries one request at a time, so
// concurrent API calls each borrow one. A connection whose request
// failed is closed, not reused (its stream may be mid-message).
type pool struct {
	sock string
	max  int
	mu   sync.Mutex
	idle []*master.Client
}

func newPool(sock string, maxIdle int) *pool { return &pool{sock: sock, max: maxIdle} }

// with runs fn on a borrowed connection.
func (p *pool) with(ctx context.Context, fn func(*master.Client) error) error {
	c, err := p.get(ctx)
	if err != nil {
		return errMasterDown(err)
	}
	err = fn(c)
	p.put(c, err)
	return err
}

func (p *pool) get(ctx context.Context) (*master.Client, error) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		c := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return c, nil
	}
	p.mu.Unlock()
	return master.Dial(ctx, p.sock)
}

func (p *pool) put(c *master.Client, err error) {
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.idle) >= p.max {
		c.Close()
		return
	}
	p.idle = append(p.idle, c)
}

// close closes the idle connections.
func (p *pool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.idle {
		c.Close()
	}
	p.idle = nil
}

// Publish publishes a job on a pooled connection.
func (p *pool) Publish(ctx context.Context, req master.PublishRequest) (jid string, minions []string, err error) {
	err = p.with(ctx, func(c *master.Client) error {
		var e error
		jid, minions, e = c.Publish(ctx, req)
		return e
	})
	return jid, minions, err
}

// Syndics asks the master which of its ids are syndics, so that a
// job's collection (client.Session) and local_async see the lower tiers
// of a master of masters as the salt command does (client/syndic.go).
func (p *pool) Syndics(ctx context.Context) (info master.SyndicInfo, err error) {
	err = p.with(ctx, func(c *master.Client) error {
		var e error
		info, e = c.Syndics(ctx)
		return e
	})
	return info, err
}

// trackingPub publishes for one job listener, telling it which jids to
// keep (see subscriber).
type trackingPub struct {
	p   *pool
	sub *subscriber
}

func (t trackingPub) Publish(ctx context.Context, req master.PublishRequest) (string, []string, error) {
	t.sub.begin()
	jid, minions, err := t.p.Publish(ctx, req)
	t.sub.end(jid)
	return jid, minions, err
}

// Syndics is the pool's: a job listener's session is tier-aware.
func (t trackingPub) Syndics(ctx context.Context) (master.SyndicInfo, error) {
	return t.p.Syndics(ctx)
}
