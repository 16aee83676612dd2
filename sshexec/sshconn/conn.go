package sshconn

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
)

// Conn is one authenticated SSH connection to a host. Sessions (Run) and
// SFTP transfers are multiplexed on it and may run concurrently. Close it
// when the host is done.
type Conn struct {
	client *ssh.Client
	addr   string
	done   chan struct{} // closed when the transport has ended

	mu        sync.Mutex
	sftp      *sftp.Client
	closed    bool
	closeOnce sync.Once
	closeErr  error
}

// Dial opens the TCP connection and completes the SSH handshake, host key
// check and authentication, bounded by ctx and cfg.Timeout. Failures are
// classified: ErrConnect, ErrAuthFailed (*AuthError), ErrHostKeyUnknown or
// ErrHostKeyMismatch (*HostKeyError).
func Dial(ctx context.Context, cfg Config) (*Conn, error) {
	if cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, cfg.Timeout,
			fmt.Errorf("connect timeout %s: %w", cfg.Timeout, context.DeadlineExceeded))
		defer cancel()
	}
	addr := cfg.addr()
	auth, err := cfg.AuthMethods()
	if err != nil {
		return nil, err
	}
	hk, err := newHostKeys(&cfg)
	if err != nil {
		return nil, err
	}
	clientCfg := &ssh.ClientConfig{
		User:              cfg.user(),
		Auth:              auth,
		HostKeyCallback:   hk.callback,
		HostKeyAlgorithms: hk.algos,
	}

	d := net.Dialer{KeepAlive: cfg.KeepAlive}
	tcp, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("connect %s: %w: %w", addr, ErrConnect, causeOr(ctx, err))
	}
	client, err := handshake(ctx, tcp, addr, clientCfg)
	if err != nil {
		tcp.Close()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("connect %s: %w: %w", addr, ErrConnect, context.Cause(ctx))
		}
		return nil, classifyHandshake(&cfg, addr, err)
	}
	c := &Conn{client: client, addr: addr, done: make(chan struct{})}
	go func() {
		client.Wait()
		close(c.done)
	}()
	return c, nil
}

// causeOr prefers ctx's cause (it says which timeout fired) over err.
func causeOr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return err
}

// handshake runs the SSH handshake on tcp, unblocking it when ctx ends by
// expiring the connection's deadline.
func handshake(ctx context.Context, tcp net.Conn, addr string, cfg *ssh.ClientConfig) (*ssh.Client, error) {
	stop := context.AfterFunc(ctx, func() { tcp.SetDeadline(time.Unix(1, 0)) })
	sc, chans, reqs, err := ssh.NewClientConn(tcp, addr, cfg)
	if !stop() || err != nil {
		if err == nil {
			sc.Close()
			err = context.Cause(ctx)
		}
		return nil, err
	}
	return ssh.NewClient(sc, chans, reqs), nil
}

// Client exposes the underlying *ssh.Client for features this package does
// not wrap (port forwards). Closing it closes the Conn.
func (c *Conn) Client() *ssh.Client { return c.client }

// Addr is the dialled host:port.
func (c *Conn) Addr() string { return c.addr }

// Done is closed once the connection has ended, by Close or by loss.
func (c *Conn) Done() <-chan struct{} { return c.done }

// lost reports whether the transport has ended.
func (c *Conn) lost() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// Close closes the SFTP client and the connection and waits for the
// connection's reader to exit. It is safe to call more than once.
func (c *Conn) Close() error {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closed = true
		s := c.sftp
		c.sftp = nil
		c.mu.Unlock()
		if s != nil {
			s.Close()
		}
		err := c.client.Close()
		<-c.done
		if err != nil && !errors.Is(err, net.ErrClosed) {
			c.closeErr = fmt.Errorf("close %s: %w", c.addr, err)
		}
	})
	return c.closeErr
}

// lostOr returns ErrConnLost when the transport has ended, else err wrapped
// with the operation. An operation can fail on a dying connection a moment
// before Done closes, so a failure is confirmed with a keepalive round
// trip, which fails at once on a dead transport.
func (c *Conn) lostOr(op string, err error) error {
	if !c.alive() {
		return fmt.Errorf("%s on %s: %w: %w", op, c.addr, ErrConnLost, err)
	}
	return fmt.Errorf("%s on %s: %w", op, c.addr, err)
}

func (c *Conn) alive() bool {
	if c.lost() {
		return false
	}
	_, _, err := c.client.SendRequest("keepalive@openssh.com", true, nil)
	return err == nil
}
