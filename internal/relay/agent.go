package relay

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
)

// ControllerAddr is the address an agent names in a "bad" event about a
// chunk the controller itself sent.
const ControllerAddr = "controller:0"

// maxHeader bounds the header line an agent reads.
const maxHeader = 16 << 20

// AgentOptions configure the host side of a relay.
type AgentOptions struct {
	Dir      string      // the content cache, <thin_dir>/files
	Mode     os.FileMode // of the files written there
	Listen   string      // host:port to serve peers on; "" serves none
	MaxServe int         // chunks served at once
	// Done, when set, is called with a file's sha256 once the file is
	// whole under its name in Dir, so a caller can put it to use while
	// the agent goes on serving its chunks to the others.
	Done func(sum string)

	// tamper, set only by this package's tests, stands for a faulty
	// host: it changes what the server sends after the store's check.
	tamper func([]byte) []byte
}

// agent is one host's side of a run.
type agent struct {
	opts  AgentOptions
	h     *Header
	store *Store
	out   io.Writer

	mu     sync.Mutex // guards out and done
	done   map[string]bool
	owners map[string][]int // chunk → indexes of the files holding it
	maxLen map[string]int
}

// RunAgent is the host side of a relay run: it reads the header and then
// commands from in, reports events on out, and serves verified chunks to
// peers until the controller says "E" or goes away. Every file of the
// header is in the store when it returns nil after "E" and every file
// reported done; a file never reported done is not there under its name.
func RunAgent(ctx context.Context, opts AgentOptions, in io.Reader, out io.Writer) error {
	br := bufio.NewReaderSize(in, 1<<16)
	line, err := readLine(br, maxHeader)
	if err != nil {
		return fmt.Errorf("read relay header: %w", err)
	}
	h, err := ParseHeader([]byte(line))
	if err != nil {
		return err
	}
	store, err := OpenStore(opts.Dir, opts.Mode)
	if err != nil {
		return err
	}
	a := &agent{opts: opts, h: h, store: store, out: out, done: map[string]bool{}, owners: map[string][]int{}, maxLen: map[string]int{}}
	for i, f := range h.Files {
		for j, c := range f.Chunks {
			a.owners[c] = append(a.owners[c], i)
			a.maxLen[c] = int(f.ChunkLen(j, h.ChunkSize))
		}
	}
	for _, f := range h.Files {
		if err := store.Expect(f, h.ChunkSize); err != nil {
			return err
		}
	}
	stopServe, err := a.serve()
	if err != nil {
		return err
	}
	defer stopServe()
	a.adopt()
	a.emit(Event{Kind: EvReady})
	fctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	for {
		line, err := readLine(br, 256)
		if errors.Is(err, io.EOF) {
			return errors.New("relay: controller went away")
		}
		if err != nil {
			return fmt.Errorf("read relay command: %w", err)
		}
		cmd, err := ParseCmd(line, h.ChunkSize)
		if err != nil {
			return err
		}
		switch cmd.Op {
		case 'E':
			return nil
		case 'C':
			data := make([]byte, cmd.Len)
			if _, err := io.ReadFull(br, data); err != nil {
				return fmt.Errorf("read chunk %s: %w", cmd.Hash, err)
			}
			a.received(cmd.Hash, ControllerAddr, a.store.Put(cmd.Hash, data))
		case 'F':
			wg.Add(1)
			go func() {
				defer wg.Done()
				data, err := Fetch(fctx, cmd.Addr, h.Key, cmd.Hash, a.maxLen[cmd.Hash])
				if err == nil { // Fetch checked the hash
					err = a.store.putVerified(cmd.Hash, data)
				}
				a.received(cmd.Hash, cmd.Addr, err)
			}()
		}
	}
}

// serve starts the peer server when a listen address is set, reporting
// the port, or why there is none (the host then only receives).
func (a *agent) serve() (stop func(), err error) {
	if a.opts.Listen == "" {
		a.emit(Event{Kind: EvNoListen, Msg: "no listen address"})
		return func() {}, nil
	}
	srv, err := NewServer(a.store, a.h.Key, max(a.opts.MaxServe, 1))
	if err != nil {
		return nil, err
	}
	srv.tamper = a.opts.tamper
	ln, err := net.Listen("tcp", a.opts.Listen)
	if err != nil {
		a.emit(Event{Kind: EvNoListen, Msg: err.Error()})
		return func() {}, nil
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	p, _ := strconv.Atoi(port)
	a.emit(Event{Kind: EvListen, Port: p})
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.Serve(ln)
	}()
	return func() {
		ln.Close()
		<-done
	}, nil
}

// adopt reports what the store already holds: whole files that still
// hash right, and verified chunks a killed run left.
func (a *agent) adopt() {
	for _, f := range a.h.Files {
		if a.store.HasFile(f.Sum) && a.store.Adopt(f, a.h.ChunkSize) == nil {
			for _, c := range f.Chunks {
				a.emit(Event{Kind: EvHave, Hash: c})
			}
			a.mu.Lock()
			a.done[f.Sum] = true
			a.mu.Unlock()
			a.emit(Event{Kind: EvDone, Hash: f.Sum})
			a.done1(f.Sum)
		}
	}
	for c := range a.owners {
		if a.store.Has(c) {
			a.emit(Event{Kind: EvHave, Hash: c})
			a.completed(c)
		}
	}
}

// received reports a chunk that arrived and was stored, or why not (err).
func (a *agent) received(chunk, from string, err error) {
	switch {
	case errors.Is(err, ErrCorrupt):
		a.emit(Event{Kind: EvBad, Hash: chunk, Addr: from})
	case err != nil:
		a.emit(Event{Kind: EvFail, Hash: chunk, Addr: from, Msg: err.Error()})
	default:
		a.emit(Event{Kind: EvHave, Hash: chunk})
		a.completed(chunk)
	}
}

// completed assembles every file chunk completes.
func (a *agent) completed(chunk string) {
	for _, i := range a.owners[chunk] {
		f := a.h.Files[i]
		a.mu.Lock()
		if a.done[f.Sum] || !a.store.Complete(f) {
			a.mu.Unlock()
			continue
		}
		a.done[f.Sum] = true
		a.mu.Unlock()
		if err := a.store.Assemble(f, a.h.ChunkSize); err != nil {
			a.mu.Lock()
			a.done[f.Sum] = false
			a.mu.Unlock()
			a.emit(Event{Kind: EvFail, Hash: f.Sum, Addr: "assemble:0", Msg: err.Error()})
			continue
		}
		a.emit(Event{Kind: EvDone, Hash: f.Sum})
		a.done1(f.Sum)
	}
}

func (a *agent) done1(sum string) {
	if a.opts.Done != nil {
		a.opts.Done(sum)
	}
}

func (a *agent) emit(e Event) {
	a.mu.Lock()
	defer a.mu.Unlock()
	fmt.Fprintln(a.out, e.String())
}
