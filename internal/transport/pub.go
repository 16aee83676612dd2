package transport

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/brinesalt/brine/internal/logattr"
)

// PubOptions configure a Publisher.
type PubOptions struct {
	// HWM is each subscriber's queue length (Salt's pub_hwm, 1000);
	// messages for a subscriber whose queue is full are dropped, as
	// libzmq's PUB drops at the high-water mark.
	HWM int
	// WriteTimeout disconnects a subscriber that does not take a message
	// within it (default 30s).
	WriteTimeout time.Duration
	// MaxMessage bounds what a subscriber may send (subscriptions).
	MaxMessage int
	// BindRetry is how long to retry a bind to an address in use
	// (0: DefaultBindRetry, negative: none).
	BindRetry time.Duration
	Log       *slog.Logger
}

// Publisher is the master's PUB socket. Each subscriber has its own
// bounded queue and writer, so a stalled subscriber delays nobody else:
// Publish never blocks on the network.
type Publisher struct {
	ln   net.Listener
	opts PubOptions
	log  *slog.Logger

	mu   sync.Mutex
	subs map[*subscriber]struct{}
	wg   sync.WaitGroup
	// Dropped counts messages dropped for full subscriber queues.
	Dropped atomic.Int64
	closed  chan struct{}
}

type subscriber struct {
	c      *Conn
	q      chan [][]byte
	mu     sync.Mutex
	topics map[string]int
	done   chan struct{}
	once   sync.Once
}

func (s *subscriber) stop() { s.once.Do(func() { close(s.done); s.c.Close() }) }

func (s *subscriber) wants(first []byte) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for t := range s.topics {
		if bytes.HasPrefix(first, []byte(t)) {
			return true
		}
	}
	return false
}

// ListenPub binds a PUB socket on addr ("host:port").
func ListenPub(ctx context.Context, addr string, o PubOptions) (*Publisher, error) {
	if o.HWM <= 0 {
		o.HWM = 1000
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 30 * time.Second
	}
	if o.MaxMessage <= 0 {
		o.MaxMessage = 64 << 10
	}
	ln, err := listen(ctx, addr, "publish", o.BindRetry, logger(o.Log))
	if err != nil {
		return nil, err
	}
	p := &Publisher{ln: ln, opts: o, log: logger(o.Log), subs: map[*subscriber]struct{}{}, closed: make(chan struct{})}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

func logger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}

// Addr is the bound address.
func (p *Publisher) Addr() net.Addr { return p.ln.Addr() }

func (p *Publisher) accept() {
	defer p.wg.Done()
	for {
		nc, err := p.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			p.log.Warn("publish accept", logattr.Err, err)
			time.Sleep(50 * time.Millisecond)
			continue
		}
		p.wg.Add(1)
		go p.serve(nc)
	}
}

func (p *Publisher) serve(nc net.Conn) {
	defer p.wg.Done()
	setKeepAlive(nc)
	c, err := Handshake(nc, TypePUB, nil, p.opts.MaxMessage, HandshakeTimeout)
	if err != nil {
		p.log.Debug("publish handshake refused", "peer", nc.RemoteAddr().String(), logattr.Err, err)
		nc.Close()
		return
	}
	c.SetWriteTimeout(p.opts.WriteTimeout)
	s := &subscriber{c: c, q: make(chan [][]byte, p.opts.HWM), topics: map[string]int{}, done: make(chan struct{})}
	p.mu.Lock()
	select {
	case <-p.closed:
		p.mu.Unlock()
		c.Close()
		return
	default:
	}
	p.subs[s] = struct{}{}
	p.mu.Unlock()
	p.wg.Add(1)
	go p.write(s)
	defer func() {
		p.mu.Lock()
		delete(p.subs, s)
		p.mu.Unlock()
		s.stop()
	}()
	for {
		frames, cmd, err := c.Recv()
		if err != nil {
			return
		}
		topic, sub, ok := Subscription(frames, cmd)
		if !ok {
			continue // PUB ignores anything else a peer sends
		}
		s.mu.Lock()
		if sub {
			s.topics[string(topic)]++
		} else if s.topics[string(topic)]--; s.topics[string(topic)] <= 0 {
			delete(s.topics, string(topic))
		}
		s.mu.Unlock()
	}
}

// maxBatch bounds the messages one vectored write takes from a queue.
const maxBatch = 256

// write sends s's queue: everything queued when it wakes goes out in one
// vectored write.
func (p *Publisher) write(s *subscriber) {
	defer p.wg.Done()
	var batch [][][]byte
	for {
		select {
		case <-s.done:
			return
		case msg := <-s.q:
			batch = append(batch[:0], msg)
		drain:
			for len(batch) < maxBatch {
				select {
				case m := <-s.q:
					batch = append(batch, m)
				default:
					break drain
				}
			}
			err := s.c.SendMany(batch)
			clear(batch) // let the messages go
			if err != nil {
				p.log.Info("dropping subscriber", "peer", s.c.RemoteAddr().String(), logattr.Err, err)
				s.stop()
				return
			}
		}
	}
}

// Publish queues a message for every subscriber whose subscription
// matches the first frame. It never blocks: a full queue drops the
// message for that subscriber only.
func (p *Publisher) Publish(frames ...[]byte) {
	if len(frames) == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for s := range p.subs {
		if !s.wants(frames[0]) {
			continue
		}
		select {
		case s.q <- frames:
		default:
			if p.Dropped.Add(1)%1000 == 1 {
				p.log.Warn("subscriber queue full, dropping message", "peer", s.c.RemoteAddr().String())
			}
		}
	}
}

// Subscribers is the number of connected subscribers.
func (p *Publisher) Subscribers() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.subs)
}

// RemoteAddrs are the addresses of the connected subscribers.
func (p *Publisher) RemoteAddrs() []net.Addr {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]net.Addr, 0, len(p.subs))
	for s := range p.subs {
		out = append(out, s.c.RemoteAddr())
	}
	return out
}

// Close stops listening and disconnects every subscriber.
func (p *Publisher) Close() error {
	p.mu.Lock()
	select {
	case <-p.closed:
	default:
		close(p.closed)
	}
	err := p.ln.Close()
	for s := range p.subs {
		s.stop()
	}
	p.mu.Unlock()
	p.wg.Wait()
	return err
}

func setKeepAlive(nc net.Conn) {
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetKeepAliveConfig(net.KeepAliveConfig{Enable: true, Idle: 300 * time.Second, Interval: 30 * time.Second, Count: 5})
	}
}

// Serve is a helper for a goroutine owner: it closes p when ctx ends.
func (p *Publisher) Serve(ctx context.Context) {
	<-ctx.Done()
	p.Close()
}

// Topic is a minion's zmq_filtering topic: sha1(id).hexdigest()
// (salt/transport/zeromq.py).
func Topic(id string) string {
	h := sha1.Sum([]byte(id))
	return hex.EncodeToString(h[:])
}
