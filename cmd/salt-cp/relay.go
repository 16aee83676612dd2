package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/brinesalt/brine/internal/config"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
	"github.com/brinesalt/brine/internal/relay"
)

// relayRun is salt-cp --relay (docs/RELAY.md, minion mode): salt-cp, on
// the master's host, is the coordinator; the minions dial it, fetch
// each chunk from a minion that holds a verified copy, or from salt-cp
// itself when none does, and place each file once its whole hash
// matched. A minion the relay could not serve gets the chunked copy
// through the master instead.
type relayRun struct {
	c     *saltCP
	coord *relay.Coordinator
	ln    net.Listener
	files map[string]string // sha256 → local path

	mu     sync.Mutex
	joined map[string]*joinState
	change chan struct{}
	wg     sync.WaitGroup
}

// joinState is one minion's part in the run as the coordinator sees it.
type joinState struct {
	ended time.Time // zero while its transfer goes on
	err   error
}

// runRelay copies the files through the relay, then the empty
// directories as the chunked copy does.
func (c *saltCP) runRelay(ctx context.Context) (*ordered.Map, int) {
	files, emptyDirs, code := c.sources()
	if code != 0 {
		return nil, code
	}
	isDir := destIsDir(files, emptyDirs, c.dest)
	want := ordered.New()
	sums := map[string]string{}
	names := make([]string, 0, len(files))
	for fn := range files {
		names = append(names, fn)
	}
	sort.Strings(names)
	for _, fn := range names {
		remote, ok := remotePath(fn, c.src, c.dest, isDir)
		if !ok {
			c.log.Error("Failed to find remote path for " + fn)
			continue
		}
		sum, err := fileSum(fn)
		if err != nil {
			fmt.Fprintln(c.stderr, err)
			return nil, 1
		}
		sums[sum] = fn
		want.Set(remote, ordered.FromPairs("sha256", sum, "mode", int(files[fn])))
	}
	l, err := dialLocal(ctx, c.sock, c.timeout)
	if err != nil {
		fmt.Fprintln(c.stderr, err)
		return nil, 1
	}
	defer l.close()
	ret := ordered.New()
	if want.Len() > 0 {
		var fallback []any
		ret, fallback, err = c.relayFiles(ctx, l, sums, want)
		if err != nil {
			fmt.Fprintln(c.stderr, "Error:", err)
			return ret, 1
		}
		if len(fallback) > 0 {
			c.log.Warn(fmt.Sprintf("relay: %d minion(s) copied through the master instead", len(fallback)))
			again := *c
			again.tgt, again.o.tgtType, again.o.chunked = fallback, "list", true
			got, code := again.runChunked(ctx)
			got.Range(func(id, v any) bool { ret.Set(id, v); return true })
			if code != 0 {
				return ret, code
			}
		}
	}
	return ret, c.makeDirs(ctx, l, emptyDirs, isDir, ret)
}

func fileSum(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// relayFiles runs one relay: it listens for the minions, publishes
// cp.recv_relay with the ticket, gathers the returns and ends the run.
// fallback lists the minions whose answer says the relay failed them.
func (c *saltCP) relayFiles(ctx context.Context, l *local, sums map[string]string, want *ordered.Map) (*ordered.Map, []any, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(c.relayIface, fmt.Sprint(c.relayPort)))
	if err != nil {
		return nil, nil, fmt.Errorf("relay: listen: %w", err)
	}
	coord, err := relay.NewCoordinator(relay.CoordOptions{Log: c.log})
	if err != nil {
		ln.Close()
		return nil, nil, err
	}
	r := &relayRun{c: c, coord: coord, ln: ln, files: sums, joined: map[string]*joinState{}, change: make(chan struct{}, 1)}
	r.wg.Add(1)
	go r.accept(ctx)
	defer r.end()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	req := c.request(protocol.RecvRelayFun, []any{want})
	req.Relay = ordered.FromPairs("port", atoi(port), "key", hex.EncodeToString(coord.Key()))
	jid, minions, err := l.pub.Publish(ctx, req)
	if err != nil {
		return nil, nil, fmt.Errorf("publish %s: %w", req.Fun, err)
	}
	got, err := r.gather(ctx, l, jid, minions)
	var fallback []any
	got.Range(func(id, v any) bool {
		if relayFailed(v) {
			fallback = append(fallback, ordered.KeyString(id))
		}
		return true
	})
	return got, fallback, err
}

func atoi(s string) int {
	n := 0
	fmt.Sscan(s, &n)
	return n
}

// relayFailed reports whether a minion's answer says the relay, not the
// destination, failed it: a minion without cp.recv_relay (Salt's own)
// answers with a string; one the relay could not feed names it.
func relayFailed(v any) bool {
	m, ok := v.(*ordered.Map)
	if !ok {
		return true
	}
	failed := false
	m.Range(func(_, x any) bool {
		s, _ := x.(string)
		failed = strings.HasPrefix(s, "relay:")
		return !failed
	})
	return failed
}

// accept joins every minion that dials in to the run.
func (r *relayRun) accept(ctx context.Context) {
	defer r.wg.Done()
	for {
		conn, err := r.ln.Accept()
		if err != nil {
			return
		}
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			id, err := r.coord.JoinConn(ctx, conn, func(id string) (map[string]string, error) {
				r.mu.Lock()
				defer r.mu.Unlock()
				if _, dup := r.joined[id]; dup {
					return nil, fmt.Errorf("relay: %s joined twice", id)
				}
				r.joined[id] = &joinState{}
				return r.files, nil
			})
			r.mu.Lock()
			if js := r.joined[id]; js != nil && js.ended.IsZero() {
				js.ended, js.err = time.Now(), err
			}
			r.mu.Unlock()
			if err != nil {
				r.c.log.Debug("relay: minion not served", "minion", id, "err", err.Error())
			}
			r.poke()
		}()
	}
}

func (r *relayRun) poke() {
	select {
	case r.change <- struct{}{}:
	default:
	}
}

// end stops the run: every agent is told to stop serving.
func (r *relayRun) end() {
	r.ln.Close()
	r.coord.Close()
	r.wg.Wait()
	s := r.coord.Stats()
	r.c.log.Info(fmt.Sprintf("relay: controller sent %d chunks (%d bytes), minions %d chunks to each other, %d corrupt, distrusted %v",
		s.ControllerChunks, s.ControllerBytes, s.PeerChunks, s.Corrupt, s.Distrusted))
}

// gather collects {minion: return} until every expected minion
// answered, or is given up: it never dialled in within the timeout, or
// its transfer ended that long ago without an answer. A minion whose
// transfer goes on is waited for: the coordinator drops one that
// stalls.
func (r *relayRun) gather(ctx context.Context, l *local, jid string, minions []string) (*ordered.Map, error) {
	got := ordered.New()
	start := time.Now()
	prefix := "salt/job/" + jid + "/ret/"
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for !r.settled(got, minions, start) {
		select {
		case <-ctx.Done():
			return got, context.Cause(ctx)
		case <-tick.C:
		case <-r.change:
		case ev, ok := <-l.events:
			if !ok {
				return got, errors.New("event stream from the master closed")
			}
			if id, ok := strings.CutPrefix(ev.Tag, prefix); ok && !got.Has(id) {
				got.Set(id, ev.Data.Value("return"))
			}
		}
	}
	return got, nil
}

func (r *relayRun) settled(got *ordered.Map, minions []string, start time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	for _, id := range minions {
		if got.Has(id) {
			continue
		}
		js := r.joined[id]
		switch {
		case js == nil && now.Sub(start) < r.c.timeout:
			return false
		case js != nil && js.ended.IsZero():
			return false
		case js != nil && now.Sub(js.ended) < r.c.timeout:
			return false
		}
	}
	return true
}

// relayOptions reads the master options of salt-cp --relay:
// salt_cp_relay turns it on for every copy, salt_cp_relay_port is the
// port salt-cp takes the minions' connections on (0: any free one; the
// minions learn it from the ticket), on the master's interface.
func relayOptions(cfg *config.Master) (iface string, port int, on bool, err error) {
	on, _ = cfg.Raw.Value("salt_cp_relay").(bool)
	if v, ok := cfg.Raw.Get("salt_cp_relay_port"); ok && v != nil {
		p, ok := protocol.AsInt(v)
		if !ok || p < 0 || p > 65535 {
			return "", 0, false, fmt.Errorf("config %s: salt_cp_relay_port: %v is not a port", cfg.File, v)
		}
		port = p
	}
	return cfg.Interface, port, on, nil
}
