package master

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
)

// The local socket is how salt and salt-run reach the master: a unix
// socket in sock_dir, mode 0600 so only root (the master's user) can
// publish. Messages are a 4-byte big-endian length and a msgpack map.
// Requests carry "cmd": publish, events (the connection then streams
// {tag, data} maps), runner.

const maxLocalMessage = 64 << 20

func writeMsg(w io.Writer, v any) error {
	b, err := protocol.MarshalBin(v)
	if err != nil {
		return err
	}
	hdr := binary.BigEndian.AppendUint32(nil, uint32(len(b)))
	_, err = w.Write(append(hdr, b...))
	return err
}

func readMsg(r io.Reader) (*ordered.Map, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n > maxLocalMessage {
		return nil, fmt.Errorf("local message of %d bytes: too large", n)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, err
	}
	v, err := protocol.Decoder{BinType: true}.Unmarshal(b)
	if err != nil {
		return nil, err
	}
	m, ok := v.(*ordered.Map)
	if !ok {
		return nil, fmt.Errorf("local message: not a map")
	}
	return m, nil
}

// localServer is the master's local socket and its open connections,
// closed together by Stop; mu guards conns.
type localServer struct {
	ln    net.Listener
	mu    sync.Mutex
	conns map[net.Conn]struct{}
}

func (l *localServer) add(c net.Conn) {
	l.mu.Lock()
	if l.conns == nil {
		l.conns = map[net.Conn]struct{}{}
	}
	l.conns[c] = struct{}{}
	l.mu.Unlock()
}

func (l *localServer) remove(c net.Conn) {
	l.mu.Lock()
	delete(l.conns, c)
	l.mu.Unlock()
}

// close closes the listener, when there is one, and every open
// connection.
func (l *localServer) close() {
	if l.ln == nil {
		return
	}
	l.ln.Close()
	l.mu.Lock()
	for c := range l.conns {
		c.Close()
	}
	l.mu.Unlock()
}

// listenLocal opens the local socket, mode 0600, and serves each
// connection in its own goroutine until Stop.
func (m *Master) listenLocal(ctx context.Context) error {
	path := m.o.LocalSocket()
	_ = os.Remove(path)
	old := syscall.Umask(0o177)
	ln, err := net.Listen("unix", path)
	syscall.Umask(old)
	if err != nil {
		return fmt.Errorf("listen %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return fmt.Errorf("listen %s: %w", path, err)
	}
	m.local.ln = ln
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				if errors.Is(err, net.ErrClosed) {
					return
				}
				continue
			}
			m.wg.Add(1)
			go func() {
				defer m.wg.Done()
				m.serveLocal(ctx, c)
			}()
		}
	}()
	return nil
}

func (m *Master) serveLocal(ctx context.Context, c net.Conn) {
	m.local.add(c)
	defer func() {
		m.local.remove(c)
		c.Close()
	}()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	r := bufio.NewReader(c)
	for {
		req, err := readMsg(r)
		if err != nil {
			return
		}
		cmd, _ := req.Value("cmd").(string)
		if cmd == "events" {
			m.streamEvents(ctx, c, r)
			return
		}
		_ = writeMsg(c, m.localRequest(ctx, cmd, req))
	}
}

// localRequest answers one request of the local socket. A refusal is
// {"error": Salt's message, "error_type": "authentication" or
// "authorization"}, any other failure {"error": message}.
func (m *Master) localRequest(ctx context.Context, cmd string, req *ordered.Map) *ordered.Map {
	ret, err := m.localCall(ctx, cmd, req)
	if err == nil {
		return ret
	}
	out := ordered.FromPairs("error", err.Error())
	var ae *AuthError
	if errors.As(err, &ae) {
		out.Set("error_type", ae.Kind)
	}
	return out
}

func (m *Master) localCall(ctx context.Context, cmd string, req *ordered.Map) (*ordered.Map, error) {
	switch cmd {
	case "publish":
		jid, minions, err := m.Publish(ctx, publishFromMap(req))
		if err != nil {
			return nil, err
		}
		return ordered.FromPairs("jid", jid, "minions", strList(minions)), nil
	case "runner", "wheel":
		ret, err := m.Call(ctx, ctx, cmd, callFromMap(req))
		if err != nil {
			return nil, err
		}
		return ordered.FromPairs("return", ret), nil
	case "mk_token":
		exp, _ := ordered.Number(req.Value("token_expire"))
		td, err := m.MkToken(ctx, credsFromMap(req), exp)
		if err != nil {
			return nil, err
		}
		return ordered.FromPairs("return", td), nil
	case "get_token":
		tok, _ := req.Value("token").(string)
		td, err := m.GetToken(tok)
		if err != nil {
			return nil, err
		}
		return ordered.FromPairs("return", td), nil
	case "fire_event":
		return m.fireLocal(req)
	case "syndics":
		return m.syndicsReply(), nil
	case "del_token":
		tok, _ := req.Value("token").(string)
		if err := m.DelToken(tok); err != nil {
			return nil, err
		}
		return ordered.FromPairs("return", true), nil
	}
	return nil, fmt.Errorf("unknown command %q", cmd)
}

func strList(l []string) []any {
	out := make([]any, len(l))
	for i, s := range l {
		out[i] = s
	}
	return out
}

func credsFromMap(req *ordered.Map) Creds {
	var c Creds
	c.Token, _ = req.Value("token").(string)
	c.Eauth, _ = req.Value("eauth").(string)
	c.Username, _ = req.Value("username").(string)
	c.Password, _ = req.Value("password").(string)
	return c
}

func callFromMap(req *ordered.Map) CallRequest {
	r := CallRequest{Auth: credsFromMap(req)}
	r.Fun, _ = req.Value("fun").(string)
	r.Arg, _ = req.Value("arg").([]any)
	r.Kwarg, _ = req.Value("kwarg").(*ordered.Map)
	r.User, _ = req.Value("user").(string)
	r.Async, _ = req.Value("async").(bool)
	return r
}

func (m *Master) streamEvents(ctx context.Context, c net.Conn, r io.Reader) {
	ch, cancel := m.bus.Subscribe()
	defer cancel()
	if err := writeMsg(c, ordered.FromPairs("subscribed", true)); err != nil {
		return
	}
	gone := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, r); close(gone) }()
	for {
		select {
		case <-ctx.Done():
			return
		case <-gone:
			return
		case ev := <-ch:
			_ = c.SetWriteDeadline(time.Now().Add(10 * time.Second))
			if err := writeMsg(c, ordered.FromPairs("tag", ev.Tag, "data", ev.Data)); err != nil {
				return
			}
		}
	}
}

func publishFromMap(req *ordered.Map) PublishRequest {
	p := PublishRequest{Tgt: req.Value("tgt")}
	p.TgtType, _ = req.Value("tgt_type").(string)
	p.Fun, _ = req.Value("fun").(string)
	p.Arg, _ = req.Value("arg").([]any)
	p.Ret, _ = req.Value("ret").(string)
	p.User, _ = req.Value("user").(string)
	p.JID, _ = req.Value("jid").(string)
	p.Delimiter, _ = req.Value("delimiter").(string)
	p.Metadata, _ = req.Value("metadata").(*ordered.Map)
	p.RetConfig, _ = req.Value("ret_config").(string)
	p.RetKwargs, _ = req.Value("ret_kwargs").(*ordered.Map)
	p.To, _ = protocol.AsInt(req.Value("to"))
	p.MasterID, _ = req.Value("master_id").(string)
	p.Relay, _ = req.Value("relay").(*ordered.Map)
	p.Auth = credsFromMap(req)
	return p
}

// Client is a connection to the master's local socket.
type Client struct {
	c net.Conn
	r *bufio.Reader
}

// Dial connects to the master's local socket.
func Dial(ctx context.Context, path string) (*Client, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, fmt.Errorf("connect to the master at %s: %w", path, err)
	}
	return &Client{c: c, r: bufio.NewReader(c)}, nil
}

// Close closes the connection.
func (c *Client) Close() error { return c.c.Close() }

func (c *Client) call(ctx context.Context, req *ordered.Map) (*ordered.Map, error) {
	stop := context.AfterFunc(ctx, func() { c.c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if err := writeMsg(c.c, req); err != nil {
		return nil, fmt.Errorf("master request: %w", err)
	}
	resp, err := readMsg(c.r)
	if err != nil {
		return nil, fmt.Errorf("master request: %w", err)
	}
	if resp.Has("error") {
		return nil, asAuthError(resp)
	}
	return resp, nil
}

// Publish asks the master to publish a job; it returns the jid and the
// minions expected to answer.
func (c *Client) Publish(ctx context.Context, p PublishRequest) (string, []string, error) {
	req := ordered.FromPairs("cmd", "publish", "tgt", p.Tgt, "tgt_type", p.TgtType, "fun", p.Fun,
		"arg", orList(p.Arg), "ret", p.Ret, "user", p.User, "jid", p.JID, "delimiter", p.Delimiter)
	if p.Metadata != nil {
		req.Set("metadata", p.Metadata)
	}
	if p.RetKwargs != nil {
		req.Set("ret_kwargs", p.RetKwargs)
	}
	if p.RetConfig != "" {
		req.Set("ret_config", p.RetConfig)
	}
	if p.To > 0 {
		req.Set("to", p.To)
	}
	if p.MasterID != "" {
		req.Set("master_id", p.MasterID)
	}
	if p.Relay != nil {
		req.Set("relay", p.Relay)
	}
	p.Auth.addTo(req)
	resp, err := c.call(ctx, req)
	if err != nil {
		return "", nil, err
	}
	jid, _ := resp.Value("jid").(string)
	var ids []string
	l, _ := resp.Value("minions").([]any)
	for _, x := range l {
		if s, ok := x.(string); ok {
			ids = append(ids, s)
		}
	}
	return jid, ids, nil
}

// Runner runs a runner function on the master.
func (c *Client) Runner(ctx context.Context, fun string, args []any, kw *ordered.Map) (any, error) {
	return c.Call(ctx, "runner", CallRequest{Fun: fun, Arg: args, Kwarg: kw})
}

// MkToken is ClearFuncs.mk_token: authenticate creds (eauth, username,
// password) and make a token. The answer is {"start", "expire", "name",
// "eauth", ["groups",] "token", "perms"}; bad credentials are an
// authentication *AuthError. tokenExpire (seconds, 0 for the master's
// token_expire) is honoured when token_expire_user_override allows.
func (c *Client) MkToken(ctx context.Context, creds Creds, tokenExpire float64) (*ordered.Map, error) {
	req := ordered.FromPairs("cmd", "mk_token")
	creds.addTo(req)
	if tokenExpire > 0 {
		req.Set("token_expire", tokenExpire)
	}
	return c.mapReturn(ctx, req)
}

// GetToken is ClearFuncs.get_token: the token's data with "perms"; an
// unknown or expired token is an authentication *AuthError.
func (c *Client) GetToken(ctx context.Context, token string) (*ordered.Map, error) {
	return c.mapReturn(ctx, ordered.FromPairs("cmd", "get_token", "token", token))
}

// DelToken removes a token; an unknown one is not an error.
func (c *Client) DelToken(ctx context.Context, token string) error {
	_, err := c.call(ctx, ordered.FromPairs("cmd", "del_token", "token", token))
	return err
}

// Call runs a runner or wheel function (kind "runner" or "wheel") with
// req.Auth's credentials, checked by the master before anything runs;
// see Master.Call for the answers.
func (c *Client) Call(ctx context.Context, kind string, req CallRequest) (any, error) {
	if req.Kwarg == nil {
		req.Kwarg = ordered.New()
	}
	user := req.User
	if user == "" {
		user = LocalUser()
	}
	m := ordered.FromPairs("cmd", kind, "fun", req.Fun, "arg", orList(req.Arg), "kwarg", req.Kwarg, "user", user)
	if req.Async {
		m.Set("async", true)
	}
	req.Auth.addTo(m)
	resp, err := c.call(ctx, m)
	if err != nil {
		return nil, err
	}
	return resp.Value("return"), nil
}

func (c *Client) mapReturn(ctx context.Context, req *ordered.Map) (*ordered.Map, error) {
	resp, err := c.call(ctx, req)
	if err != nil {
		return nil, err
	}
	m, ok := resp.Value("return").(*ordered.Map)
	if !ok {
		return nil, fmt.Errorf("master request %v: no data in the answer", req.Value("cmd"))
	}
	return m, nil
}

// addTo puts the credentials that are set into a socket request.
func (c Creds) addTo(req *ordered.Map) {
	for _, kv := range [][2]string{{"token", c.Token}, {"eauth", c.Eauth}, {"username", c.Username}, {"password", c.Password}} {
		if kv[1] != "" {
			req.Set(kv[0], kv[1])
		}
	}
}

// Events turns the connection into an event stream; the channel closes
// when the connection or ctx ends.
func (c *Client) Events(ctx context.Context) (<-chan Event, error) {
	if _, err := c.call(ctx, ordered.FromPairs("cmd", "events")); err != nil {
		return nil, err
	}
	ch := make(chan Event, 1000)
	context.AfterFunc(ctx, func() { c.c.Close() })
	go func() {
		defer close(ch)
		for {
			msg, err := readMsg(c.r)
			if err != nil {
				return
			}
			tag, _ := msg.Value("tag").(string)
			data, _ := msg.Value("data").(*ordered.Map)
			select {
			case ch <- Event{Tag: tag, Data: data}:
			case <-ctx.Done():
				return
			}
		}
	}()
	return ch, nil
}
