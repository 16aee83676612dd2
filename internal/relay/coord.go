package relay

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"sync"
	"time"
)

// CoordOptions tune a Coordinator; zero values take the defaults.
type CoordOptions struct {
	ChunkSize int // DefaultChunkSize
	// MaxPending bounds the chunks one host receives at once (4).
	MaxPending int
	// MaxServe bounds the chunks one host serves at once (4).
	MaxServe int
	// ControllerStreams bounds the chunks the controller sends at once,
	// over all hosts (4): the uplink is shared, so a few streams fill it.
	ControllerStreams int
	// SendTimeout bounds writing one chunk to a host (60s): a host whose
	// session stops draining is dropped from the run.
	SendTimeout time.Duration
	// AssignTimeout bounds one peer fetch as the controller sees it
	// (30s): an answer that never comes counts as a failure.
	AssignTimeout time.Duration
	Log           *slog.Logger
}

func (o *CoordOptions) defaults() {
	if o.ChunkSize <= 0 {
		o.ChunkSize = DefaultChunkSize
	}
	if o.MaxPending <= 0 {
		o.MaxPending = 4
	}
	if o.MaxServe <= 0 {
		o.MaxServe = 4
	}
	if o.ControllerStreams <= 0 {
		o.ControllerStreams = 4
	}
	if o.SendTimeout <= 0 {
		o.SendTimeout = 60 * time.Second
	}
	if o.AssignTimeout <= 0 {
		o.AssignTimeout = 30 * time.Second
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
}

// Stats count what a run moved.
type Stats struct {
	ControllerChunks int   // chunks the controller sent
	ControllerBytes  int64 // their bytes
	PeerChunks       int   // chunks hosts fetched from each other
	Corrupt          int   // chunks that failed their hash on arrival
	PeerFailures     int   // peer fetches that failed or timed out
	Timeouts         int   // of those, fetches with no answer in AssignTimeout
	DeadSources      int   // hosts given up as sources (failures in a row)
	Distrusted       []string
}

// Coordinator is the controller's side of a relay run: it knows which
// host holds which verified chunk and tells each host where to fetch
// the chunks it lacks, sending a chunk itself only when no host of the
// run can.
type Coordinator struct {
	opts CoordOptions
	key  []byte

	mu      sync.Mutex
	files   map[string]*localFile
	chunks  map[string]*chunkState
	members []*member
	ctrl    int // controller chunks in flight
	stats   Stats
	closed  bool
	recheck *time.Timer // schedule again after readyGrace (schedule.go)

	// The scheduler's queues (schedule.go).
	dirty      []*member      // hosts to fill
	ctrlWait   []*member      // hosts waiting for a controller stream
	freedSrcs  []*member      // hosts that gave back a serve slot
	newHolders []*chunkHolder // hosts that just verified a chunk
	ctrlFree   bool           // a controller stream came free
	sweep      bool           // fill every host (someone left or failed)
	unready    int            // live hosts that have not reported ready

	stop chan struct{}
	wg   sync.WaitGroup
}

type localFile struct {
	once sync.Once
	path string
	f    File
	err  error
}

type chunkState struct {
	hash string
	path string
	off  int64
	n    int
	// on holds the members that have or are receiving the chunk.
	on map[*member]bool
	// holders are the listening members that verified it, in that
	// order (some may have left since: usable tells); next is where
	// bestSource looks first.
	holders []*member
	next    int
	// waiters want it while every holder is busy (schedule.go).
	waiters []*member
	waiting map[*member]bool
}

// chunkHolder is a host that just verified a chunk, whose serve slots
// go to the chunk's waiters.
type chunkHolder struct {
	cs  *chunkState
	src *member
}

type assignment struct {
	src   *member // nil: the controller
	since time.Time
}

type member struct {
	id, host, addr string
	listening      bool
	heard          bool // listen or nolisten arrived
	ready          bool // the agent reported what it holds
	joined         time.Time
	stdin          io.WriteCloser
	want           []string
	files          map[string]bool // file sum → done
	have           map[string]bool
	pending        map[string]assignment
	serving        int
	alive          bool
	bad, deadSrc   bool
	failStreak     int // fetches from it that failed since its last success
	unreach        map[*member]bool
	peerOK         int
	complete       bool
	dirty          bool // queued in Coordinator.dirty
	ctrlWaiting    bool // queued in Coordinator.ctrlWait
	sendq          chan string
	quit           chan struct{} // closed when the member leaves
	finished       chan struct{}
	err            error
}

// NewCoordinator starts a run with a fresh random key.
func NewCoordinator(opts CoordOptions) (*Coordinator, error) {
	opts.defaults()
	key, err := newKey()
	if err != nil {
		return nil, err
	}
	c := &Coordinator{opts: opts, key: key, files: map[string]*localFile{}, chunks: map[string]*chunkState{}, stop: make(chan struct{})}
	c.wg.Add(1)
	go c.watch()
	return c, nil
}

// Stats returns what the run has moved so far.
func (c *Coordinator) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stats
	s.Distrusted = append([]string(nil), s.Distrusted...)
	return s
}

// manifest splits the local file once per run and checks it is sum.
func (c *Coordinator) manifest(sum, path string) (File, error) {
	c.mu.Lock()
	lf, ok := c.files[sum]
	if !ok {
		lf = &localFile{path: path}
		c.files[sum] = lf
	}
	c.mu.Unlock()
	lf.once.Do(func() {
		lf.f, lf.err = Split(lf.path, c.opts.ChunkSize)
		if lf.err == nil && lf.f.Sum != sum {
			lf.err = fmt.Errorf("split %s: %w: it changed since it was hashed", lf.path, ErrCorrupt)
		}
		if lf.err != nil {
			return
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		for i, h := range lf.f.Chunks {
			if _, ok := c.chunks[h]; !ok {
				c.chunks[h] = &chunkState{hash: h, path: lf.path, off: int64(i) * int64(c.opts.ChunkSize), n: int(lf.f.ChunkLen(i, c.opts.ChunkSize)), on: map[*member]bool{}, waiting: map[*member]bool{}}
			}
		}
	})
	return lf.f, lf.err
}

// Peer is one host joining a run: the agent's stdin and stdout over its
// SSH session, and the files (sha256 → local path) it needs.
type Peer struct {
	ID string
	// Host is the address other hosts reach this one at; the port is
	// the one the agent reports.
	Host   string
	Stdin  io.WriteCloser
	Events io.Reader
	Files  map[string]string
}

// Join adds a host to the run and returns once every file it needs is
// in place there, or with why not: the host left, was dropped, or ctx
// ended. The host stays in the run as a source until Close.
func (c *Coordinator) Join(ctx context.Context, p Peer) error {
	h := Header{Key: c.key, ChunkSize: c.opts.ChunkSize}
	m := &member{id: p.ID, host: p.Host, stdin: p.Stdin, files: map[string]bool{}, have: map[string]bool{},
		pending: map[string]assignment{}, alive: true, joined: time.Now(), unreach: map[*member]bool{},
		sendq: make(chan string, c.opts.MaxPending+2), quit: make(chan struct{}), finished: make(chan struct{})}
	seen := map[string]bool{}
	for sum, path := range p.Files {
		f, err := c.manifest(sum, path)
		if err != nil {
			p.Stdin.Close()
			return err
		}
		h.Files = append(h.Files, f)
		m.files[sum] = false
		for _, ch := range f.Chunks {
			if !seen[ch] {
				seen[ch] = true
				m.want = append(m.want, ch)
			}
		}
	}
	// Each host asks for chunks in its own order, so the first holders of
	// different chunks differ and the run spreads at once.
	rand.Shuffle(len(m.want), func(i, j int) { m.want[i], m.want[j] = m.want[j], m.want[i] })
	line, _ := json.Marshal(h)
	if _, err := p.Stdin.Write(append(line, '\n')); err != nil {
		p.Stdin.Close()
		return fmt.Errorf("relay to %s: send header: %w", p.ID, err)
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		p.Stdin.Close()
		return errors.New("relay run is over")
	}
	c.members = append(c.members, m)
	c.unready++
	c.mu.Unlock()
	c.wg.Add(2)
	go c.send(m)
	go c.read(m, p.Events)
	select {
	case <-m.finished:
	case <-ctx.Done():
		c.mu.Lock()
		c.kill(m, context.Cause(ctx))
		c.schedule()
		c.mu.Unlock()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if m.complete {
		return nil
	}
	return fmt.Errorf("relay to %s: %w", p.ID, m.err)
}

// Close ends the run: every host is told to stop serving and exit.
func (c *Coordinator) Close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	for _, m := range c.members {
		if m.alive {
			m.sendq <- ""
		}
	}
	c.mu.Unlock()
	close(c.stop)
	c.wg.Wait()
}

// send writes the controller's chunks to one host, then "E" at the end.
func (c *Coordinator) send(m *member) {
	defer c.wg.Done()
	defer m.stdin.Close()
	for {
		var item string
		select {
		case item = <-m.sendq:
		case <-m.quit:
			return
		}
		var err error
		switch {
		case item == "":
			m.stdin.Write([]byte("E\n"))
			return
		case item[0] == 'F':
			_, err = io.WriteString(m.stdin, item+"\n")
		default:
			err = c.sendChunk(m, item[2:])
		}
		if err != nil {
			c.mu.Lock()
			c.kill(m, err)
			c.mu.Unlock()
			return
		}
	}
}

func (c *Coordinator) sendChunk(m *member, h string) error {
	c.mu.Lock()
	cs := c.chunks[h]
	c.mu.Unlock()
	f, err := os.Open(cs.path)
	if err != nil {
		return fmt.Errorf("read chunk: %w", err)
	}
	defer f.Close()
	data := make([]byte, cs.n)
	if _, err := f.ReadAt(data, cs.off); err != nil {
		return fmt.Errorf("read chunk: %w", err)
	}
	timer := time.AfterFunc(c.opts.SendTimeout, func() { m.stdin.Close() })
	defer timer.Stop()
	if _, err := fmt.Fprintf(m.stdin, "C %s %d\n", h, len(data)); err != nil {
		return fmt.Errorf("send chunk: %w", err)
	}
	if _, err := m.stdin.Write(data); err != nil {
		return fmt.Errorf("send chunk: %w", err)
	}
	c.mu.Lock()
	c.stats.ControllerChunks++
	c.stats.ControllerBytes += int64(len(data))
	c.mu.Unlock()
	return nil
}

// read applies one host's events until its session ends.
func (c *Coordinator) read(m *member, events io.Reader) {
	defer c.wg.Done()
	br := bufio.NewReader(events)
	var why error
	for {
		line, err := readLine(br, 4096)
		if err != nil {
			why = fmt.Errorf("relay session ended: %w", err)
			break
		}
		ev, err := ParseEvent(line)
		if err != nil {
			why = err
			break
		}
		c.mu.Lock()
		c.apply(m, ev)
		c.schedule()
		c.mu.Unlock()
	}
	io.Copy(io.Discard, br)
	c.mu.Lock()
	c.kill(m, why)
	c.schedule()
	c.mu.Unlock()
}

// apply records one event; c.mu is held.
func (c *Coordinator) apply(m *member, ev Event) {
	switch ev.Kind {
	case EvListen:
		m.addr, m.listening, m.heard = net.JoinHostPort(m.host, fmt.Sprint(ev.Port)), true, true
	case EvNoListen:
		m.heard = true
		c.opts.Log.Debug("relay: host serves no peers", "host", m.id, "why", ev.Msg)
	case EvReady:
		if !m.ready {
			m.ready = true
			c.unready--
			c.markDirty(m)
			c.ctrlFree = true // hosts the grace held back may go on
		}
	case EvHave:
		cs, ok := c.chunks[ev.Hash]
		if !ok || m.have[ev.Hash] {
			return
		}
		if a, ok := m.pending[ev.Hash]; ok {
			c.release(m, ev.Hash, a)
			if a.src != nil {
				m.peerOK++
				a.src.failStreak = 0
				c.stats.PeerChunks++
			}
		}
		m.have[ev.Hash] = true
		cs.on[m] = true
		c.markDirty(m)
		if m.listening {
			cs.holders = append(cs.holders, m)
			c.newHolders = append(c.newHolders, &chunkHolder{cs: cs, src: m})
		}
	case EvBad:
		c.stats.Corrupt++
		a, ok := m.pending[ev.Hash]
		if !ok {
			return
		}
		c.drop(m, ev.Hash, a)
		if a.src != nil && !a.src.bad {
			a.src.bad = true
			c.stats.Distrusted = append(c.stats.Distrusted, a.src.id)
			c.opts.Log.Warn("relay: host served a corrupt chunk; not trusted for the rest of the run", "host", a.src.id, "to", m.id)
		}
	case EvFail:
		if a, ok := m.pending[ev.Hash]; ok {
			c.opts.Log.Debug("relay: fetch failed", "host", m.id, "from", ev.Addr, "why", ev.Msg)
			c.drop(m, ev.Hash, a)
			c.failed(m, a.src)
			return
		}
		if _, ok := m.files[ev.Hash]; ok {
			c.kill(m, fmt.Errorf("assemble %s: %s", ev.Hash, ev.Msg))
		}
	case EvDone:
		if done, ok := m.files[ev.Hash]; ok && !done {
			m.files[ev.Hash] = true
			for _, d := range m.files {
				if !d {
					return
				}
			}
			m.complete = true
			close(m.finished)
		}
	}
}

// maxFailStreak is how many fetches from a host may fail in a row, with
// no success between, before it is given up as a source for the run. A
// host that went away fails every fetch; one that is only slow under
// load (a timeout now and then, between successes) stays a source, so
// the run does not fall back to the controller's uplink for it.
const maxFailStreak = 3

// failed records that m could not fetch from src: m stops asking src,
// and a source that failed maxFailStreak fetches in a row is given up.
func (c *Coordinator) failed(m, src *member) {
	if src == nil {
		return
	}
	c.stats.PeerFailures++
	m.unreach[src] = true
	src.failStreak++
	if src.failStreak >= maxFailStreak && !src.deadSrc {
		src.deadSrc = true
		c.stats.DeadSources++
		c.opts.Log.Debug("relay: host unreachable as a source", "host", src.id)
	}
}

// release ends an assignment that completed; the slot it held is
// offered on at the next schedule.
func (c *Coordinator) release(m *member, h string, a assignment) {
	delete(m.pending, h)
	c.markDirty(m)
	if a.src == nil {
		c.ctrl--
		c.ctrlFree = true
	} else {
		a.src.serving--
		c.freedSrcs = append(c.freedSrcs, a.src)
	}
}

// drop ends an assignment that failed: m no longer counts as a copy,
// so hosts that waited on m's copy may now need another source.
func (c *Coordinator) drop(m *member, h string, a assignment) {
	c.release(m, h, a)
	delete(c.chunks[h].on, m)
	c.sweep = true
}

// kill removes m from the run; c.mu is held.
func (c *Coordinator) kill(m *member, why error) {
	if !m.alive {
		return
	}
	m.alive = false
	if !m.ready {
		c.unready--
	}
	c.sweep = true
	close(m.quit)
	if why == nil {
		why = errors.New("relay session ended")
	}
	for h, a := range m.pending {
		c.drop(m, h, a)
	}
	for h := range m.have {
		delete(c.chunks[h].on, m)
	}
	if !m.complete {
		m.err = why
		close(m.finished)
	}
	m.stdin.Close()
	c.opts.Log.Debug("relay: host left the run", "host", m.id, "why", why.Error())
}

// watch expires peer fetches whose answer never came.
func (c *Coordinator) watch() {
	defer c.wg.Done()
	t := time.NewTicker(c.opts.AssignTimeout / 4)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case now := <-t.C:
			c.mu.Lock()
			for _, m := range c.members {
				for h, a := range m.pending {
					if a.src != nil && now.Sub(a.since) > c.opts.AssignTimeout {
						c.stats.Timeouts++
						c.drop(m, h, a)
						c.failed(m, a.src)
					}
				}
			}
			c.scheduleAll()
			c.mu.Unlock()
		}
	}
}
