package sshexec

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/relay"
	"github.com/brinesalt/brine/roster"
)

// RelayOptions turn on salt-ssh --relay (docs/RELAY.md): large files of
// a host's content cache arrive in verified chunks from other hosts of
// the run that hold them, and from the controller only when none can.
type RelayOptions struct {
	// Port is the TCP port hosts serve chunks on (ssh_relay_port; a
	// roster entry's relay_port wins); 0 lets each host pick a free one.
	Port int
	// MinSize: smaller files go over SFTP as before (default 1 MiB).
	MinSize int64
	Coord   relay.CoordOptions
}

// exitNoRelayBin is the relay script's exit when the host has no thin
// binary of this build to run the agent with.
const exitNoRelayBin = 97

// relayRun is one Executor.Run's relay: the coordinator, and the
// connections kept open after their host finished, so it goes on serving
// the others until the run ends.
type relayRun struct {
	e     *Executor
	opts  RelayOptions
	coord *relay.Coordinator

	mu       sync.Mutex
	held     map[Conn]bool
	sessions sync.WaitGroup
}

func (e *Executor) newRelayRun() (*relayRun, error) {
	o := *e.opts.Relay
	if o.MinSize <= 0 {
		o.MinSize = 1 << 20
	}
	if o.Coord.Log == nil {
		o.Coord.Log = e.opts.Log
	}
	c, err := relay.NewCoordinator(o.Coord)
	if err != nil {
		return nil, err
	}
	return &relayRun{e: e, opts: o, coord: c, held: map[Conn]bool{}}, nil
}

// closeConn closes a host's connection unless the relay keeps it open.
func (r *relayRun) closeConn(conn Conn) {
	if r != nil {
		r.mu.Lock()
		held := r.held[conn]
		r.mu.Unlock()
		if held {
			return
		}
	}
	conn.Close()
}

// end stops every agent, waits for their sessions and closes the
// connections kept for them. Every host is done when it runs.
func (r *relayRun) end() {
	r.coord.Close()
	done := make(chan struct{})
	go func() {
		r.sessions.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		r.e.opts.Log.Warn("relay: agents still running at the end of the run; closing their connections")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for c := range r.held {
		c.Close()
	}
	s := r.coord.Stats()
	r.e.opts.Log.Info("relay: run done", "controller_chunks", s.ControllerChunks, "controller_bytes", s.ControllerBytes,
		"peer_chunks", s.PeerChunks, "peer_failures", s.PeerFailures, "timeouts", s.Timeouts, "dead_sources", s.DeadSources,
		"corrupt", s.Corrupt, "distrusted", strings.Join(s.Distrusted, ","))
}

// split returns the uploads worth relaying (at least MinSize) apart.
func (r *relayRun) split(uploads map[string]string, missing []string) (relayed map[string]string, rest []string) {
	relayed = map[string]string{}
	for _, sum := range missing {
		local, ok := uploads[sum]
		if !ok {
			continue
		}
		if st, err := os.Stat(local); err == nil && st.Size() >= r.opts.MinSize {
			relayed[sum] = local
		} else {
			rest = append(rest, sum)
		}
	}
	return relayed, rest
}

// fill brings files (sha256 → local path) into the host's content cache
// through the relay: it starts the thin binary's relay agent over a
// session of conn and joins the run.
func (r *relayRun) fill(ctx context.Context, conn Conn, t *roster.Target, p scriptParams, files map[string]string) error {
	port := r.opts.Port
	if t.RelayPort > 0 {
		port = t.RelayPort
	}
	host := t.RelayHost
	if host == "" {
		host = strings.TrimSuffix(strings.TrimPrefix(t.Host, "["), "]")
	}
	mode := "0600"
	if p.SudoUser != "" {
		mode = "0640"
	}
	bin := r.e.opts.Bundle.BinName()
	var b strings.Builder
	p.prelude(&b)
	fmt.Fprintf(&b, "[ -x \"$T\"/%s ] || { echo 'no thin binary to relay with' >&2; exit %d; }\n", shellQuote(bin), exitNoRelayBin)
	fmt.Fprintf(&b, "exec \"$T\"/%s relay --dir \"$T/files\" --listen :%d --mode %s\n", shellQuote(bin), port, mode)
	inR, inW := io.Pipe()
	evR, evW := io.Pipe()
	r.mu.Lock()
	r.held[conn] = true
	r.mu.Unlock()
	r.sessions.Add(1)
	go func() {
		defer r.sessions.Done()
		var stderr bytes.Buffer
		code, err := conn.Run(ctx, b.String(), inR, evW, &stderr)
		if err == nil && code != 0 {
			err = fmt.Errorf("relay agent exit %d: %s", code, strings.TrimSpace(stderr.String()))
		}
		if err != nil {
			r.e.opts.Log.Debug("relay agent ended", logattr.Host, t.ID, logattr.Err, err)
		}
		evW.CloseWithError(errors.Join(io.EOF, err))
		inR.Close()
	}()
	return r.coord.Join(ctx, relay.Peer{ID: t.ID, Host: host, Stdin: inW, Events: evR, Files: files})
}
