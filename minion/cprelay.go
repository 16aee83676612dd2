package minion

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"path/filepath"
	"sort"
	"strings"

	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
	"github.com/brinesalt/brine/internal/relay"
	"github.com/brinesalt/brine/state/modules/file"
)

// relayTicket is a publication's relay ticket, checked.
type relayTicket struct {
	addr string
	key  []byte
}

func (m *Minion) relayTicket(t *ordered.Map) (relayTicket, error) {
	port, ok := protocol.AsInt(t.Value("port"))
	if !ok || port < 1 || port > 65535 {
		return relayTicket{}, fmt.Errorf("relay ticket: bad port %v", t.Value("port"))
	}
	k, _ := t.Value("key").(string)
	key, err := hex.DecodeString(k)
	if err != nil || len(key) != relay.KeySize {
		return relayTicket{}, errors.New("relay ticket: bad key")
	}
	addr := strings.TrimPrefix(m.req.Address(), "tcp://")
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return relayTicket{}, fmt.Errorf("relay ticket: master address %q: %w", addr, err)
	}
	return relayTicket{addr: net.JoinHostPort(host, fmt.Sprint(port)), key: key}, nil
}

// relayWant is one file the job places.
type relayWant struct {
	dest, sum string
	mode      fs.FileMode
}

func relayFiles(arg []any) ([]relayWant, error) {
	if len(arg) != 1 {
		return nil, errors.New("cp.recv_relay takes one argument, {dest: {sha256, mode}}")
	}
	files, ok := arg[0].(*ordered.Map)
	if !ok {
		return nil, errors.New("cp.recv_relay: the argument is not a mapping")
	}
	var out []relayWant
	var bad error
	files.Range(func(k, v any) bool {
		dest := ordered.KeyString(k)
		meta, _ := v.(*ordered.Map)
		sum, _ := meta.Value("sha256").(string)
		if !filepath.IsAbs(dest) || len(sum) != 64 {
			bad = fmt.Errorf("cp.recv_relay: bad entry for %q", dest)
			return false
		}
		mode := fs.FileMode(0o644)
		if n, ok := protocol.AsInt(meta.Value("mode")); ok {
			mode = file.PermBits(uint32(n) & 0o7777)
		}
		out = append(out, relayWant{dest: dest, sum: sum, mode: mode})
		return true
	})
	return out, bad
}

// recvRelay runs cp.recv_relay. The agent goes on serving the chunks
// after the files are placed, until the coordinator ends the run, so
// the job returns as soon as this minion's copies are in place: the
// agent lives under ctx (the minion's), the wait under jctx (the job's).
func (m *Minion) recvRelay(ctx, jctx context.Context, job *protocol.Job) (any, int) {
	if job.Relay == nil {
		return "cp.recv_relay: the publication carries no relay ticket", 1
	}
	t, err := m.relayTicket(job.Relay)
	if err != nil {
		return err.Error(), 1
	}
	want, err := relayFiles(job.Arg)
	if err != nil {
		return err.Error(), 1
	}
	dir := filepath.Join(m.c.CacheDir, "relay")
	port, _ := protocol.AsInt(m.opts.Value("relay_port"))
	sums := map[string]bool{}
	for _, w := range want {
		sums[w.sum] = true
	}
	done := make(chan string, len(sums)+1)
	ended := make(chan error, 1)
	opts := relay.AgentOptions{Dir: dir, Mode: 0o600, Listen: fmt.Sprintf(":%d", port), MaxServe: 4,
		Done: func(sum string) { done <- sum }}
	m.jobs.Add(1)
	go func() {
		defer m.jobs.Done()
		err := relay.RunAgentConn(ctx, opts, t.addr, t.key, m.id)
		if err != nil {
			m.log.Debug("relay agent ended", logattr.JID, job.JID, logattr.Err, err)
		}
		ended <- err
		// The files are placed; the store keeps only the verified chunks
		// of files that did not complete, for a rerun to resume from.
		for sum := range sums {
			relay.Discard(dir, sum)
		}
	}()
	got := map[string]bool{}
	var why error
	for len(got) < len(sums) && why == nil {
		select {
		case s := <-done:
			got[s] = true
		case err := <-ended:
			why = err
			if why == nil {
				why = errors.New("the relay ended before the file was whole")
			}
		case <-jctx.Done():
			why = context.Cause(jctx)
		}
	}
	return placeRelayed(dir, want, got, why)
}

// placeRelayed puts every whole file at its destinations.
func placeRelayed(dir string, want []relayWant, got map[string]bool, why error) (any, int) {
	sort.Slice(want, func(i, j int) bool { return want[i].dest < want[j].dest })
	ret := ordered.New()
	rc := 0
	for _, w := range want {
		var err error
		if got[w.sum] {
			err = relay.Place(dir, w.sum, w.dest, w.mode)
		} else {
			err = fmt.Errorf("relay: %w", why)
		}
		if err != nil {
			var pe *fs.PathError
			msg := err.Error()
			if errors.As(err, &pe) {
				msg = file.PyOSError(pe)
			}
			ret.Set(w.dest, msg)
			rc = 1
			continue
		}
		ret.Set(w.dest, true)
	}
	return ret, rc
}
