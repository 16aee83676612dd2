// Package transport is the ZeroMQ wire layer Salt's master and minion
// speak (salt/transport/zeromq.py): ZMTP 3.0 with the NULL mechanism over
// TCP, the master's PUB (publish_port) and ROUTER (ret_port) sockets and
// the minion's SUB and REQ sockets.
//
// The handshake and framing are written here rather than taken from
// github.com/go-zeromq/zmq4 v0.17.0 because a listening master must
// survive hostile peers: zmq4's Conn allocates whatever frame size a peer
// declares before reading it (one header can exhaust memory), its PUB
// socket blocks every subscriber behind a stalled one (fixed upstream
// after v0.17.0, unreleased), and its sockets do not surface a lost
// connection to the caller. zmq4 remains the independent implementation
// the tests talk to, and libzmq (pyzmq) peers interoperate.
//
// Frames are read as their bytes arrive, never allocated at the size a
// header declares, and the Router bounds what request peers not yet
// authenticated may send, each and together (limits.go).
package transport

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// Socket types as carried in the READY command's Socket-Type property.
const (
	TypePUB    = "PUB"
	TypeSUB    = "SUB"
	TypeREQ    = "REQ"
	TypeREP    = "REP"
	TypeROUTER = "ROUTER"
	TypeDEALER = "DEALER"
)

// DefaultMaxMessage bounds one message (all frames) a peer may send;
// Salt has no such limit, but a master must not let one frame header
// decide how much memory it allocates.
const DefaultMaxMessage = 100 << 20

// ErrTooLarge is a frame or message over the size limit.
var ErrTooLarge = errors.New("zmtp: message too large")

// ErrProtocol is a peer that does not speak ZMTP 3 with NULL security,
// or sends malformed frames.
var ErrProtocol = errors.New("zmtp: protocol error")

const (
	flagMore    = 0x01
	flagLong    = 0x02
	flagCommand = 0x04
)

// greeting returns the 64-byte ZMTP 3.0 greeting (rfc 23): signature,
// version 3.0, mechanism NULL, as-server 0.
func greeting() []byte {
	g := make([]byte, 64)
	g[0] = 0xff
	g[9] = 0x7f
	g[10], g[11] = 3, 0
	copy(g[12:32], "NULL")
	return g
}

// compatible lists the peer types each socket type accepts (rfc 23).
var compatible = map[string][]string{
	TypePUB: {TypeSUB, "XSUB"}, TypeSUB: {TypePUB, "XPUB"},
	TypeREQ: {TypeREP, TypeROUTER}, TypeREP: {TypeREQ, TypeDEALER},
	TypeROUTER: {TypeREQ, TypeDEALER, TypeROUTER}, TypeDEALER: {TypeREP, TypeDEALER, TypeROUTER},
}

// Conn is one ZMTP connection after the handshake.
type Conn struct {
	nc      net.Conn
	r       *bufio.Reader
	max     int
	Peer    map[string]string // the peer's READY metadata
	minor   byte              // the peer's minor version
	wmu     sync.Mutex        // serialises writes: a PONG from Recv and a writer's Send
	wbuf    []byte
	timeout time.Duration
}

// HandshakeTimeout bounds a connection's ZMTP greeting and READY
// exchange: libzmq's ZMQ_HANDSHAKE_IVL default, 30,000 ms, which Salt's
// sockets keep. A tighter bound fails first where a host is busiest: a
// master starved of CPU by thousands of sign-ins cut handshakes at
// 10 s, the minions retried on new connections (more handshakes), and
// sign-in stopped making progress (docs/BENCHMARKS.md, "Syndic trees").
const HandshakeTimeout = 30 * time.Second

// Handshake performs the greeting and the NULL READY exchange on nc as a
// socket of type typ with the given identity, refusing incompatible
// peers. max bounds received messages (0: DefaultMaxMessage); timeout
// bounds the handshake.
func Handshake(nc net.Conn, typ string, identity []byte, max int, timeout time.Duration) (*Conn, error) {
	if max <= 0 {
		max = DefaultMaxMessage
	}
	c := &Conn{nc: nc, r: newReader(nc), max: max, timeout: timeout}
	if timeout > 0 {
		_ = nc.SetDeadline(time.Now().Add(timeout))
		defer nc.SetDeadline(time.Time{})
	}
	if _, err := nc.Write(greeting()); err != nil {
		return nil, fmt.Errorf("zmtp greeting: %w", err)
	}
	var g [64]byte
	if _, err := io.ReadFull(c.r, g[:]); err != nil {
		return nil, fmt.Errorf("zmtp greeting: %w", err)
	}
	minor, err := parseGreeting(g[:])
	if err != nil {
		return nil, fmt.Errorf("zmtp greeting: %w", err)
	}
	c.minor = minor
	props := [][2]string{{"Socket-Type", typ}}
	if typ == TypeREQ || typ == TypeDEALER || typ == TypeROUTER || typ == TypeSUB {
		props = append(props, [2]string{"Identity", string(identity)})
	}
	if err := c.Send([][]byte{readyBody(props)}, true); err != nil {
		return nil, fmt.Errorf("zmtp ready: %w", err)
	}
	frames, cmd, _, err := c.readMessage(msgLimit{max: 64 << 10})
	if err != nil {
		return nil, fmt.Errorf("zmtp ready: %w", err)
	}
	if !cmd || len(frames) != 1 {
		return nil, fmt.Errorf("zmtp ready: expected a READY command: %w", ErrProtocol)
	}
	name, body, err := parseCommand(frames[0])
	if err != nil || name != "READY" {
		return nil, fmt.Errorf("zmtp ready: got %q: %w", name, ErrProtocol)
	}
	if c.Peer, err = parseProps(body); err != nil {
		return nil, fmt.Errorf("zmtp ready: %w", err)
	}
	peer := c.Peer["Socket-Type"]
	ok := false
	for _, t := range compatible[typ] {
		ok = ok || t == peer
	}
	if !ok {
		return nil, fmt.Errorf("zmtp ready: peer %q cannot talk to %s: %w", peer, typ, ErrProtocol)
	}
	return c, nil
}

// parseGreeting checks a peer's 64-byte greeting (rfc 23): the
// signature's first and last bytes, major version 3 or later and the
// NULL mechanism, the only one Salt's sockets use. It returns the
// peer's minor version.
func parseGreeting(g []byte) (minor byte, err error) {
	if len(g) != 64 {
		return 0, fmt.Errorf("greeting of %d bytes: %w", len(g), ErrProtocol)
	}
	if g[0] != 0xff || g[9]&1 != 1 || g[10] < 3 {
		return 0, fmt.Errorf("not ZMTP 3: %w", ErrProtocol)
	}
	if mech := bytes.TrimRight(g[12:32], "\x00"); string(mech) != "NULL" {
		return 0, fmt.Errorf("mechanism %q: %w", mech, ErrProtocol)
	}
	return g[11], nil
}

func readyBody(props [][2]string) []byte {
	b := []byte{5}
	b = append(b, "READY"...)
	for _, p := range props {
		b = append(b, byte(len(p[0])))
		b = append(b, p[0]...)
		b = binary.BigEndian.AppendUint32(b, uint32(len(p[1])))
		b = append(b, p[1]...)
	}
	return b
}

// parseCommand splits a command frame into its name and body.
func parseCommand(f []byte) (string, []byte, error) {
	if len(f) < 1 || int(f[0]) > len(f)-1 {
		return "", nil, fmt.Errorf("command name: %w", ErrProtocol)
	}
	return string(f[1 : 1+f[0]]), f[1+f[0]:], nil
}

// parseProps reads READY metadata: name-len(1) name value-len(4) value.
func parseProps(b []byte) (map[string]string, error) {
	out := map[string]string{}
	for len(b) > 0 {
		n := int(b[0])
		if len(b) < 1+n+4 {
			return nil, fmt.Errorf("metadata: %w", ErrProtocol)
		}
		name := string(b[1 : 1+n])
		b = b[1+n:]
		vl := binary.BigEndian.Uint32(b)
		b = b[4:]
		if uint64(vl) > uint64(len(b)) {
			return nil, fmt.Errorf("metadata: %w", ErrProtocol)
		}
		out[name] = string(b[:vl])
		b = b[vl:]
	}
	return out, nil
}

// msgLimit is what one message read may take: at most max bytes in all
// and, with a budget, every byte past the first free ones taken from
// that shared budget (see limits.go).
type msgLimit struct {
	max    int
	budget *budget
	free   int
}

// frameCost is what a frame counts towards a message's limit besides
// its body: the slice that holds it. Without it a peer could send
// endless empty MORE frames, 2 bytes each on the wire and 24 in memory.
const frameCost = 32

// readMessage reads one message (frames up to the last without MORE),
// refusing more than lim.max bytes in all (bodies and frameCost per
// frame). cmd reports a command frame.
// charged is what the message took from lim.budget; the caller gives it
// back when it lets go of the frames (on an error it is already back).
func (c *Conn) readMessage(lim msgLimit) (frames [][]byte, cmd bool, charged int64, err error) {
	total := 0
	defer func() {
		if err != nil {
			lim.budget.give(charged)
			frames, charged = nil, 0
		}
	}()
	for {
		flags, size, err := c.readHeader()
		if err != nil {
			return nil, false, charged, err
		}
		if total+frameCost > lim.max || size > uint64(lim.max-total-frameCost) {
			return nil, false, charged, fmt.Errorf("frame of %d bytes over the %d-byte message limit: %w", size, lim.max, ErrTooLarge)
		}
		if err := lim.take(total, 0, frameCost, &charged); err != nil {
			return nil, false, charged, err
		}
		total += frameCost
		body, err := c.readBody(int(size), total, lim, &charged)
		if err != nil {
			return nil, false, charged, err
		}
		total += int(size)
		frames = append(frames, body)
		if flags&flagCommand != 0 {
			if flags&flagMore != 0 {
				return nil, false, charged, fmt.Errorf("command with MORE: %w", ErrProtocol)
			}
			return frames, true, charged, nil
		}
		if flags&flagMore == 0 {
			return frames, false, charged, nil
		}
	}
}

// readHeader reads a frame header (rfc 23): flags, then a 1-byte size
// or, with LONG, an 8-byte one.
func (c *Conn) readHeader() (flags byte, size uint64, err error) {
	var hdr [9]byte
	if _, err := io.ReadFull(c.r, hdr[:2]); err != nil {
		return 0, 0, err
	}
	flags = hdr[0]
	if flags&^(flagMore|flagLong|flagCommand) != 0 {
		return 0, 0, fmt.Errorf("frame flags %#x: %w", flags, ErrProtocol)
	}
	if flags&flagLong == 0 {
		return flags, uint64(hdr[1]), nil
	}
	if _, err := io.ReadFull(c.r, hdr[2:9]); err != nil {
		return 0, 0, err
	}
	return flags, binary.BigEndian.Uint64(hdr[1:9]), nil
}

// firstChunk is the most a frame body gets before any of it arrived.
const firstChunk = 64 << 10

// readBody reads a frame body of size bytes, the message having taken
// before bytes already. The buffer grows (doubling) as bytes arrive
// rather than being allocated at the declared size: a header costs
// nothing until its body is actually sent, so a peer claiming 100 MB
// and sending 33 KB holds 64 KB, not 100 MB. Growth past lim.free
// bytes of the message is taken from lim.budget first.
func (c *Conn) readBody(size, before int, lim msgLimit, charged *int64) ([]byte, error) {
	n := min(size, firstChunk)
	if err := lim.take(before, 0, n, charged); err != nil {
		return nil, err
	}
	body := make([]byte, 0, n)
	for len(body) < size {
		if len(body) == cap(body) {
			grown := min(size, 2*cap(body))
			if err := lim.take(before, cap(body), grown, charged); err != nil {
				return nil, err
			}
			nb := make([]byte, len(body), grown)
			copy(nb, body)
			body = nb
		}
		m, err := c.r.Read(body[len(body):cap(body)])
		body = body[:len(body)+m]
		if err != nil && len(body) < size {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
	return body, nil
}

// take charges the growth of a frame buffer from had to want bytes,
// the message's earlier frames holding before bytes, to the budget:
// only what lies past lim.free bytes of the message counts.
func (lim msgLimit) take(before, had, want int, charged *int64) error {
	if lim.budget == nil {
		return nil
	}
	over := func(n int) int64 { return int64(max(0, before+n-lim.free)) }
	need := over(want) - over(had)
	if need == 0 {
		return nil
	}
	if !lim.budget.take(need) {
		return fmt.Errorf("%d more bytes for a message from a peer not yet authenticated: %w", need, ErrBudget)
	}
	*charged += need
	return nil
}

// Recv returns the next message, answering PING commands and handing
// other commands (SUBSCRIBE, CANCEL) back with cmd set.
func (c *Conn) Recv() (frames [][]byte, cmd bool, err error) {
	frames, cmd, _, err = c.recv(msgLimit{max: c.max})
	return frames, cmd, err
}

// recv is Recv under lim; charged is what a data message took from
// lim.budget (commands give theirs back at once).
func (c *Conn) recv(lim msgLimit) (frames [][]byte, cmd bool, charged int64, err error) {
	for {
		frames, cmd, charged, err = c.readMessage(lim)
		if err != nil || !cmd {
			return frames, cmd, charged, err
		}
		lim.budget.give(charged)
		name, body, perr := parseCommand(frames[0])
		if perr != nil {
			return nil, false, 0, perr
		}
		if name == "PING" {
			// PONG echoes the context after the 2-byte TTL.
			ctx := []byte{}
			if len(body) > 2 {
				ctx = body[2:]
			}
			pong := append([]byte{4}, "PONG"...)
			if err := c.Send([][]byte{append(pong, ctx...)}, true); err != nil {
				return nil, false, 0, err
			}
			continue
		}
		return frames, true, 0, nil
	}
}

// appendHeader appends a frame header for a body of n bytes.
func appendHeader(b []byte, n int, flags byte) []byte {
	if n > 255 {
		b = append(b, flags|flagLong)
		return binary.BigEndian.AppendUint64(b, uint64(n))
	}
	return append(b, flags, byte(n))
}

func frameFlags(i, n int, cmd bool) byte {
	switch {
	case cmd:
		return flagCommand
	case i < n-1:
		return flagMore
	}
	return 0
}

func (c *Conn) setWriteDeadline() {
	if c.timeout > 0 {
		_ = c.nc.SetWriteDeadline(time.Now().Add(c.timeout))
	}
}

// Send writes one message; cmd sends a single command frame. It is safe
// to call alongside Recv (which answers PINGs) and SendMany.
func (c *Conn) Send(frames [][]byte, cmd bool) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.wbuf = c.wbuf[:0]
	for i, f := range frames {
		c.wbuf = appendHeader(c.wbuf, len(f), frameFlags(i, len(frames), cmd))
		c.wbuf = append(c.wbuf, f...)
	}
	c.setWriteDeadline()
	_, err := c.nc.Write(c.wbuf)
	c.wbuf = c.wbuf[:0]
	return err
}

// SendMany writes several messages with one vectored write: only the
// frame headers are built here, the bodies go out as they are, so a
// publisher fanning one message out to thousands of subscribers neither
// copies it per subscriber nor makes a system call per message, as
// libzmq batches a pipe into its out buffer.
func (c *Conn) SendMany(msgs [][][]byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.wbuf = c.wbuf[:0]
	n := 0
	for _, m := range msgs {
		for i, f := range m {
			c.wbuf = appendHeader(c.wbuf, len(f), frameFlags(i, len(m), false))
			n++
		}
	}
	bufs := make(net.Buffers, 0, 2*n)
	off := 0
	for _, m := range msgs {
		for _, f := range m {
			hl := 2
			if len(f) > 255 {
				hl = 9
			}
			bufs = append(bufs, c.wbuf[off:off+hl], f)
			off += hl
		}
	}
	c.setWriteDeadline()
	_, err := bufs.WriteTo(c.nc)
	c.wbuf = c.wbuf[:0]
	return err
}

// SetWriteTimeout bounds each Send (0: none).
func (c *Conn) SetWriteTimeout(d time.Duration) { c.timeout = d }

// Close closes the connection.
func (c *Conn) Close() error { return c.nc.Close() }

// RemoteAddr is the peer's address.
func (c *Conn) RemoteAddr() net.Addr { return c.nc.RemoteAddr() }

// Subscription decodes a subscription message: ZMTP 3.0 sends it as a
// one-frame message starting with 1 (subscribe) or 0 (cancel), ZMTP 3.1
// as a SUBSCRIBE or CANCEL command. ok is false for anything else.
func Subscription(frames [][]byte, cmd bool) (topic []byte, subscribe, ok bool) {
	if len(frames) != 1 {
		return nil, false, false
	}
	f := frames[0]
	if cmd {
		name, body, err := parseCommand(f)
		if err != nil {
			return nil, false, false
		}
		switch name {
		case "SUBSCRIBE":
			return body, true, true
		case "CANCEL":
			return body, false, true
		}
		return nil, false, false
	}
	if len(f) == 0 || f[0] > 1 {
		return nil, false, false
	}
	return f[1:], f[0] == 1, true
}

func newReader(nc net.Conn) *bufio.Reader { return bufio.NewReaderSize(nc, 64<<10) }
