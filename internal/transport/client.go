package transport

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"
)

// Dial connects to addr as a socket of type typ (SUB, REQ or DEALER)
// with the given identity (Salt sets the minion id as ZMQ_IDENTITY).
func Dial(ctx context.Context, addr, typ string, identity []byte, max int) (*Conn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	setKeepAlive(nc)
	// The handshake ends with ctx too, not only after its own 10 s: a
	// peer that accepts and never speaks must not outlast the caller.
	stop := context.AfterFunc(ctx, func() { nc.SetDeadline(time.Unix(1, 0)) })
	c, err := Handshake(nc, typ, identity, max, HandshakeTimeout)
	if !stop() && err == nil {
		err = context.Cause(ctx)
	}
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	return c, nil
}

// Subscribe sends a ZMTP 3.0 subscription for topic ("" for all).
func (c *Conn) Subscribe(topic []byte) error {
	return c.Send([][]byte{append([]byte{1}, topic...)}, false)
}

// Req is a REQ socket: one request at a time, each answered before the
// next. A request that fails or times out closes the connection, as
// Salt's client does, and the next one redials.
type Req struct {
	Addr     string
	Identity []byte
	Max      int

	mu sync.Mutex
	c  *Conn
}

// Do sends body and waits for the reply until ctx ends.
func (r *Req) Do(ctx context.Context, body []byte) ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.c == nil {
		c, err := Dial(ctx, r.Addr, TypeREQ, r.Identity, r.Max)
		if err != nil {
			return nil, err
		}
		r.c = c
	}
	c := r.c
	stop := context.AfterFunc(ctx, func() { c.nc.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if err := c.Send([][]byte{{}, body}, false); err != nil {
		r.drop()
		return nil, fmt.Errorf("request to %s: %w", r.Addr, err)
	}
	for {
		frames, cmd, err := c.Recv()
		if err != nil {
			r.drop()
			if ctx.Err() != nil {
				return nil, fmt.Errorf("request to %s: %w", r.Addr, context.Cause(ctx))
			}
			return nil, fmt.Errorf("request to %s: %w", r.Addr, err)
		}
		if cmd {
			continue
		}
		if len(frames) != 2 || len(frames[0]) != 0 {
			r.drop()
			return nil, fmt.Errorf("request to %s: malformed reply: %w", r.Addr, ErrProtocol)
		}
		return frames[1], nil
	}
}

func (r *Req) drop() {
	if r.c != nil {
		r.c.Close()
		r.c = nil
	}
}

// Close closes the connection.
func (r *Req) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.drop()
	return nil
}

// SetAddr points the socket at another address, closing the current
// connection; the next request dials it.
func (r *Req) SetAddr(addr string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.drop()
	r.Addr = addr
}

// Address is the current address.
func (r *Req) Address() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.Addr
}
