package relay

import (
	"context"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// The control stream carries the controller's commands and an agent's
// events over TCP when there is no SSH session to carry them (minion
// mode: the master coordinates, the minions dial it). The run's key
// reaches the agent out of band (inside the master's encrypted
// publication); the stream itself is sealed under keys derived from it:
//
//	server → agent  "BRC1" salt[32]
//	both ways       frames len[4] seal(data) with nonce dir[4]|counter[8]
//	agent → server  first frame: the agent's id
//
// Each direction has its own key, HMAC-SHA256(run key, dir|salt), and a
// counter nonce, so frames cannot be replayed, reordered or reflected,
// and a fresh salt per connection keeps nonces from repeating across
// the run's connections. A connection whose first frame does not open
// gets no answer.
const (
	controlMagic = "BRC1"
	saltLen      = 32
	// maxFrame bounds one frame's sealed bytes.
	maxFrame = 1 << 20
	// helloTimeout bounds the handshake.
	helloTimeout = 10 * time.Second
)

// sealed is one side of a control stream.
type sealed struct {
	c          net.Conn
	send, recv cipher.AEAD
	sdir, rdir uint32

	wmu  sync.Mutex
	sctr uint64
	rctr uint64
	rbuf []byte
}

func deriveAEAD(key, salt []byte, dir string) (cipher.AEAD, error) {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(dir))
	mac.Write(salt)
	return newAEAD(mac.Sum(nil))
}

func newSealed(c net.Conn, key, salt []byte, agent bool) (*sealed, error) {
	a2s, err := deriveAEAD(key, salt, "agent-to-server")
	if err != nil {
		return nil, err
	}
	s2a, err := deriveAEAD(key, salt, "server-to-agent")
	if err != nil {
		return nil, err
	}
	if agent {
		return &sealed{c: c, send: a2s, recv: s2a, sdir: 1, rdir: 2}, nil
	}
	return &sealed{c: c, send: s2a, recv: a2s, sdir: 2, rdir: 1}, nil
}

func nonceFor(dir uint32, ctr uint64) []byte {
	n := make([]byte, 12)
	binary.BigEndian.PutUint32(n, dir)
	binary.BigEndian.PutUint64(n[4:], ctr)
	return n
}

// Write seals p into frames.
func (s *sealed) Write(p []byte) (int, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if len(p) == 0 {
		return 0, nil
	}
	written := 0
	for len(p) > 0 {
		n := min(len(p), maxFrame-s.send.Overhead())
		out := binary.BigEndian.AppendUint32(nil, uint32(n+s.send.Overhead()))
		out = s.send.Seal(out, nonceFor(s.sdir, s.sctr), p[:n], nil)
		s.sctr++
		if _, err := s.c.Write(out); err != nil {
			return written, err
		}
		written += n
		p = p[n:]
	}
	return written, nil
}

// Read opens the next frame when the last is used up.
func (s *sealed) Read(p []byte) (int, error) {
	for len(s.rbuf) == 0 {
		var head [4]byte
		if _, err := io.ReadFull(s.c, head[:]); err != nil {
			s.c.Close()
			return 0, err
		}
		n := binary.BigEndian.Uint32(head[:])
		if n > maxFrame || int(n) < s.recv.Overhead() {
			s.c.Close()
			return 0, fmt.Errorf("relay control frame of %d bytes: %w", n, ErrCorrupt)
		}
		buf := make([]byte, n)
		if _, err := io.ReadFull(s.c, buf); err != nil {
			s.c.Close()
			return 0, noEOF(err)
		}
		plain, err := s.recv.Open(buf[:0], nonceFor(s.rdir, s.rctr), buf, nil)
		if err != nil {
			s.c.Close()
			return 0, fmt.Errorf("relay control frame: %w", ErrCorrupt)
		}
		s.rctr++
		s.rbuf = plain
	}
	n := copy(p, s.rbuf)
	s.rbuf = s.rbuf[n:]
	return n, nil
}

func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// drainTimeout bounds how long a stream whose writer closed waits for
// the other side to end its own.
const drainTimeout = 30 * time.Second

// Close half-closes the stream: the other side reads what was written,
// then the end of input. Reading goes on until the other side ends too
// (at most drainTimeout); the connection closes then (Read).
func (s *sealed) Close() error {
	s.c.SetReadDeadline(time.Now().Add(drainTimeout))
	if tc, ok := s.c.(interface{ CloseWrite() error }); ok {
		return tc.CloseWrite()
	}
	return s.c.Close()
}

// Key is the run's key, for an agent that learns it out of band
// (JoinConn and RunAgentConn). It must travel only over a channel as
// private as the run's hosts.
func (c *Coordinator) Key() []byte { return append([]byte(nil), c.key...) }

// JoinConn is Join for an agent that dialled the controller (minion
// mode): it seals the stream under the run's key, learns the agent's id
// from its first frame, and joins it as a peer reachable at the
// connection's remote address. files (sha256 → local path) may depend
// on the id. The id comes back even when the join then fails.
func (c *Coordinator) JoinConn(ctx context.Context, conn net.Conn, files func(id string) (map[string]string, error)) (string, error) {
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		conn.Close()
		return "", fmt.Errorf("relay control: %w", err)
	}
	conn.SetDeadline(time.Now().Add(helloTimeout))
	if _, err := conn.Write(append([]byte(controlMagic), salt...)); err != nil {
		return "", fmt.Errorf("relay control hello: %w", err)
	}
	s, err := newSealed(conn, c.key, salt, false)
	if err != nil {
		conn.Close()
		return "", err
	}
	id, err := readID(s)
	if err != nil {
		conn.Close()
		return "", fmt.Errorf("relay control from %s: %w", conn.RemoteAddr(), err)
	}
	conn.SetDeadline(time.Time{})
	fs, err := files(id)
	if err != nil {
		conn.Close()
		return id, err
	}
	// From here the coordinator owns the stream: it half-closes it when
	// it is done with the host, and the connection closes once the
	// agent's side has ended too (sealed.Read, sealed.Close).
	host, _, _ := net.SplitHostPort(conn.RemoteAddr().String())
	return id, c.Join(ctx, Peer{ID: id, Host: host, Stdin: s, Events: s, Files: fs})
}

// maxID bounds an agent's id.
const maxID = 1024

func readID(s *sealed) (string, error) {
	buf := make([]byte, maxID)
	n, err := s.Read(buf)
	if err != nil {
		return "", err
	}
	if n == 0 {
		return "", errors.New("empty agent id")
	}
	return string(buf[:n]), nil
}

// RunAgentConn is RunAgent over a control stream the agent dialled:
// addr is the controller's, key the run's (learnt out of band) and id
// the name the agent joins under.
func RunAgentConn(ctx context.Context, opts AgentOptions, addr string, key []byte, id string) error {
	if len(key) != KeySize {
		return fmt.Errorf("relay control: key of %d bytes, want %d", len(key), KeySize)
	}
	if id == "" || len(id) > maxID {
		return fmt.Errorf("relay control: bad agent id %q", id)
	}
	d := net.Dialer{Timeout: dialTimeout}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("relay control: %w", err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	conn.SetDeadline(time.Now().Add(helloTimeout))
	hello := make([]byte, len(controlMagic)+saltLen)
	if _, err := io.ReadFull(conn, hello); err != nil {
		return fmt.Errorf("relay control hello from %s: %w", addr, err)
	}
	if string(hello[:len(controlMagic)]) != controlMagic {
		return fmt.Errorf("relay control: %s is not a relay controller", addr)
	}
	s, err := newSealed(conn, key, hello[len(controlMagic):], true)
	if err != nil {
		return err
	}
	if _, err := s.Write([]byte(id)); err != nil {
		return fmt.Errorf("relay control: %w", err)
	}
	conn.SetDeadline(time.Time{})
	return RunAgent(ctx, opts, s, s)
}
