package sshconn

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
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
	hops   []*ssh.Client // ProxyJump connections, outermost first
	addr   string
	done   chan struct{}  // closed when the transport has ended
	fwd    sync.WaitGroup // remote port forward goroutines

	mu        sync.Mutex
	sftp      *sftp.Client
	closed    bool
	closeOnce sync.Once
	closeErr  error
}

// Dial opens the TCP connection (through the Jumps, if any) and completes
// the SSH handshake, host key check and authentication, bounded by ctx and
// cfg.Timeout. Failures are classified: ErrConnect, ErrAuthFailed
// (*AuthError), ErrHostKeyUnknown or ErrHostKeyMismatch (*HostKeyError),
// *KeyError, *PassphraseError, *AgentError, ErrJumpLoop; a failure at a jump
// host is a *JumpError naming it around the same classes.
func Dial(ctx context.Context, cfg Config) (*Conn, error) {
	if err := checkJumpLoop(&cfg); err != nil {
		return nil, err
	}
	if cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, cfg.Timeout,
			fmt.Errorf("connect timeout %s: %w", cfg.Timeout, context.DeadlineExceeded))
		defer cancel()
	}
	var hops []*ssh.Client
	closeHops := func() {
		for i := len(hops) - 1; i >= 0; i-- {
			hops[i].Close()
		}
	}
	var via *ssh.Client
	for i := range cfg.Jumps {
		hop := cfg.Jumps[i]
		hop.Jumps = nil
		if hop.Logger == nil {
			hop.Logger = cfg.Logger
		}
		client, err := dialOne(ctx, &hop, via)
		if err != nil {
			closeHops()
			return nil, &JumpError{Hop: hop.user() + "@" + hop.addr(), Index: i, Err: err}
		}
		hops = append(hops, client)
		via = client
	}
	client, err := dialOne(ctx, &cfg, via)
	if err != nil {
		closeHops()
		return nil, err
	}
	c := &Conn{client: client, hops: hops, addr: cfg.addr(), done: make(chan struct{})}
	go func() {
		client.Wait()
		close(c.done)
	}()
	if cfg.ServerAliveInterval > 0 {
		go c.keepAlive(cfg.ServerAliveInterval, cfg.ServerAliveCountMax)
	}
	c.startRemoteForwards(&cfg)
	return c, nil
}

// dialOne connects to cfg's host directly, or through via, and runs the
// handshake.
func dialOne(ctx context.Context, cfg *Config, via *ssh.Client) (*ssh.Client, error) {
	if cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, cfg.Timeout,
			fmt.Errorf("connect timeout %s: %w", cfg.Timeout, context.DeadlineExceeded))
		defer cancel()
	}
	addr := cfg.addr()
	a, err := cfg.buildAuth()
	if err != nil {
		return nil, err
	}
	defer a.close()
	hk, err := newHostKeys(cfg)
	if err != nil {
		return nil, err
	}
	clientCfg := &ssh.ClientConfig{
		User:              cfg.user(),
		Auth:              a.methods,
		HostKeyCallback:   hk.callback,
		HostKeyAlgorithms: hk.algos,
		BannerCallback:    a.banner,
	}
	var tcp net.Conn
	if via == nil {
		d := net.Dialer{KeepAlive: cfg.KeepAlive}
		tcp, err = d.DialContext(ctx, "tcp", addr)
	} else {
		tcp, err = via.DialContext(ctx, "tcp", addr)
	}
	if err != nil {
		return nil, fmt.Errorf("connect %s: %w: %w", addr, ErrConnect, causeOr(ctx, err))
	}
	client, err := handshake(ctx, tcp, addr, clientCfg)
	if err != nil {
		tcp.Close()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("connect %s: %w: %w", addr, ErrConnect, context.Cause(ctx))
		}
		return nil, classifyHandshake(cfg, addr, err, a)
	}
	return client, nil
}

// checkJumpLoop refuses a chain that passes the same host:port twice,
// target included: OpenSSH would recurse until it ran out of descriptors.
func checkJumpLoop(cfg *Config) error {
	seen := map[string]bool{}
	for _, c := range append(append([]Config(nil), cfg.Jumps...), *cfg) {
		k := strings.ToLower(c.addr())
		if seen[k] {
			return fmt.Errorf("connect %s: %w: %s appears twice in the chain %s", cfg.addr(), ErrJumpLoop, c.addr(), chainString(cfg))
		}
		seen[k] = true
	}
	return nil
}

func chainString(cfg *Config) string {
	var parts []string
	for _, j := range cfg.Jumps {
		parts = append(parts, j.addr())
	}
	return strings.Join(append(parts, cfg.addr()), " -> ")
}

// keepAlive sends OpenSSH keepalive requests every interval and closes the
// connection after countMax unanswered ones in a row.
func (c *Conn) keepAlive(interval time.Duration, countMax int) {
	if countMax <= 0 {
		countMax = 3
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	missed := 0
	for {
		select {
		case <-c.done:
			return
		case <-t.C:
		}
		reply := make(chan error, 1)
		go func() {
			_, _, err := c.client.SendRequest("keepalive@openssh.com", true, nil)
			reply <- err
		}()
		select {
		case <-c.done:
			return
		case err := <-reply:
			if err != nil {
				c.client.Close()
				return
			}
			missed = 0
		case <-time.After(interval):
			if missed++; missed >= countMax {
				c.client.Close()
				return
			}
		}
	}
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
		c.fwd.Wait()
		for i := len(c.hops) - 1; i >= 0; i-- {
			c.hops[i].Close()
		}
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
