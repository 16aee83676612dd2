package relay

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// The peer protocol, one chunk per TCP connection:
//
//	server → client  "BRR1" nonce[16]
//	client → server  gcmNonce[12] seal(hash[32], aad "req"|nonce)
//	server → client  status[1]; when 0: gcmNonce[12] len[4] seal(chunk, aad "chunk"|nonce|hash)
//
// A request opens only under the run's key, so a stranger learns nothing
// and gets nothing; the reply is sealed under the same key, so the bytes
// are confidential on the wire; and the receiver still hashes what it
// opened, because a host of the run may itself be faulty.
const (
	magic       = "BRR1"
	nonceLen    = 16
	statusOK    = 0
	statusNone  = 1
	statusBusy  = 2
	dialTimeout = 3 * time.Second
	// ioTimeout bounds every read or write on a peer connection: a peer
	// that vanishes (its link down) fails the fetch instead of stalling it.
	ioTimeout = 10 * time.Second
)

// ErrNotHeld means the peer does not hold (or would not serve) the chunk.
var ErrNotHeld = errors.New("peer does not hold the chunk")

// newKey makes a run's key.
func newKey() ([]byte, error) {
	key := make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("relay key: %w", err)
	}
	return key, nil
}

func newAEAD(key []byte) (cipher.AEAD, error) {
	b, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(b)
}

// Server serves a store's verified chunks to peers of the run.
type Server struct {
	store  *Store
	aead   cipher.AEAD
	slots  chan struct{}
	tamper func([]byte) []byte // see AgentOptions.tamper

	wg sync.WaitGroup
}

// NewServer returns a server for store under key, for a coordinator
// that has it serve at most maxServe chunks at once.
func NewServer(store *Store, key []byte, maxServe int) (*Server, error) {
	aead, err := newAEAD(key)
	if err != nil {
		return nil, fmt.Errorf("relay server: %w", err)
	}
	// Twice the coordinator's bound: it counts a serve as done when the
	// receiver reports the chunk, which can come before this side's
	// handler has returned, and a "busy" answer would cost the source
	// its standing in the run.
	return &Server{store: store, aead: aead, slots: make(chan struct{}, 2*maxServe)}, nil
}

// Serve accepts on ln until it is closed, then waits for the connections
// in flight.
func (s *Server) Serve(ln net.Listener) {
	defer s.wg.Wait()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer c.Close()
			s.handle(c)
		}()
	}
}

func (s *Server) handle(c net.Conn) {
	c.SetDeadline(time.Now().Add(ioTimeout))
	nonce := make([]byte, nonceLen)
	rand.Read(nonce)
	if _, err := c.Write(append([]byte(magic), nonce...)); err != nil {
		return
	}
	req := make([]byte, s.aead.NonceSize()+32+s.aead.Overhead())
	if _, err := io.ReadFull(c, req); err != nil {
		return
	}
	ns := s.aead.NonceSize()
	raw, err := s.aead.Open(nil, req[:ns], req[ns:], append([]byte("req"), nonce...))
	if err != nil {
		return // not a peer of this run: no answer at all
	}
	select {
	case s.slots <- struct{}{}:
		defer func() { <-s.slots }()
	default:
		c.Write([]byte{statusBusy})
		return
	}
	// One pooled buffer: the header, then the chunk read in behind it
	// and sealed in place, then one write. A host serving four chunks at
	// once holds four buffers, not a read copy and a sealed copy each.
	head := 1 + ns + 4
	buf := getBuf()
	defer putBuf(buf)
	data, err := s.store.ReadInto(hex.EncodeToString(raw), (*buf)[head:head])
	if err != nil {
		c.Write([]byte{statusNone})
		return
	}
	if s.tamper != nil {
		data = s.tamper(data)
	}
	out := (*buf)[:head]
	out[0] = statusOK
	gn := out[1 : 1+ns]
	rand.Read(gn)
	out = s.aead.Seal(out, gn, data, append(append([]byte("chunk"), nonce...), raw...))
	binary.BigEndian.PutUint32(out[1+ns:head], uint32(len(out)-head))
	c.SetDeadline(time.Now().Add(ioTimeout + time.Duration(len(out)>>20)*ioTimeout))
	c.Write(out)
}

// Fetch asks the peer at addr for chunk, opens the reply under key and
// checks its hash: ErrCorrupt when the bytes are not the chunk (the peer
// is faulty), ErrNotHeld when it has no copy, another error when it could
// not be reached.
func Fetch(ctx context.Context, addr string, key []byte, chunk string, maxLen int) ([]byte, error) {
	aead, err := newAEAD(key)
	if err != nil {
		return nil, err
	}
	raw, err := hex.DecodeString(chunk)
	if err != nil || len(raw) != 32 {
		return nil, fmt.Errorf("fetch %q: not a sha256", chunk)
	}
	d := net.Dialer{Timeout: dialTimeout}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("fetch %s from %s: %w", chunk[:12], addr, err)
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	data, err := exchange(c, aead, raw, maxLen)
	if err != nil {
		return nil, fmt.Errorf("fetch %s from %s: %w", chunk[:12], addr, err)
	}
	if hashOf(data) != chunk {
		return nil, fmt.Errorf("fetch %s from %s: %w", chunk[:12], addr, ErrCorrupt)
	}
	return data, nil
}

// bufPool holds the buffers a server seals chunks in: the largest chunk
// a header allows, its GCM tag and the reply's header.
var bufPool = sync.Pool{New: func() any {
	b := make([]byte, 0, MaxChunkSize+64)
	return &b
}}

func getBuf() *[]byte  { return bufPool.Get().(*[]byte) }
func putBuf(b *[]byte) { bufPool.Put(b) }

// deadlineReader sets a fresh deadline before every read, so a slow but
// moving transfer goes on and a stalled one stops.
type deadlineReader struct{ c net.Conn }

func (r deadlineReader) Read(p []byte) (int, error) {
	r.c.SetReadDeadline(time.Now().Add(ioTimeout))
	return r.c.Read(p)
}

func exchange(c net.Conn, aead cipher.AEAD, raw []byte, maxLen int) ([]byte, error) {
	r := deadlineReader{c}
	hello := make([]byte, len(magic)+nonceLen)
	if _, err := io.ReadFull(r, hello); err != nil {
		return nil, err
	}
	if string(hello[:len(magic)]) != magic {
		return nil, errors.New("not a relay peer")
	}
	nonce := hello[len(magic):]
	ns := aead.NonceSize()
	gn := make([]byte, ns)
	rand.Read(gn)
	c.SetWriteDeadline(time.Now().Add(ioTimeout))
	if _, err := c.Write(append(gn, aead.Seal(nil, gn, raw, append([]byte("req"), nonce...))...)); err != nil {
		return nil, err
	}
	head := make([]byte, 1)
	if _, err := io.ReadFull(r, head); err != nil {
		return nil, err
	}
	switch head[0] {
	case statusOK:
	case statusBusy:
		return nil, fmt.Errorf("%w: busy", ErrNotHeld)
	default:
		return nil, ErrNotHeld
	}
	meta := make([]byte, ns+4)
	if _, err := io.ReadFull(r, meta); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(meta[ns:])
	if int64(n) > int64(maxLen)+int64(aead.Overhead()) {
		return nil, fmt.Errorf("reply of %d bytes: %w", n, ErrCorrupt)
	}
	sealed := make([]byte, n)
	if _, err := io.ReadFull(r, sealed); err != nil {
		return nil, err
	}
	// Opened in place: the chunk needs no second buffer.
	data, err := aead.Open(sealed[:0], meta[:ns], sealed, append(append([]byte("chunk"), nonce...), raw...))
	if err != nil {
		return nil, fmt.Errorf("open reply: %w", ErrCorrupt)
	}
	return data, nil
}
