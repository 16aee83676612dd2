package relay

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"strings"
)

// KeySize is the length of a run's key (AES-256).
const KeySize = 32

// Header is the first line the controller writes to an agent: the run's
// key, which never travels anywhere but the SSH session, and the files
// this host needs.
type Header struct {
	Key       []byte `json:"key"`
	ChunkSize int    `json:"chunk_size"`
	Files     []File `json:"files"`
}

// ParseHeader decodes and checks a header line.
func ParseHeader(line []byte) (*Header, error) {
	var h Header
	if err := json.Unmarshal(line, &h); err != nil {
		return nil, fmt.Errorf("relay header: %w", err)
	}
	if len(h.Key) != KeySize {
		return nil, fmt.Errorf("relay header: key of %d bytes, want %d", len(h.Key), KeySize)
	}
	if h.ChunkSize < 1 || h.ChunkSize > MaxChunkSize {
		return nil, fmt.Errorf("relay header: chunk size %d out of range", h.ChunkSize)
	}
	for _, f := range h.Files {
		if err := f.check(h.ChunkSize); err != nil {
			return nil, fmt.Errorf("relay header: %w", err)
		}
	}
	return &h, nil
}

// Cmd is one controller command to an agent.
type Cmd struct {
	Op   byte   // 'C' chunk data follows, 'F' fetch from a peer, 'E' end
	Hash string // the chunk, for C and F
	Len  int    // bytes of data after the line, for C
	Addr string // the peer's host:port, for F
}

// ParseCmd decodes a command line (without its newline).
func ParseCmd(line string, chunkSize int) (Cmd, error) {
	f := strings.Fields(line)
	switch {
	case len(f) == 1 && f[0] == "E":
		return Cmd{Op: 'E'}, nil
	case len(f) == 3 && f[0] == "C" && validHash(f[1]):
		n, err := strconv.Atoi(f[2])
		if err != nil || n < 0 || n > chunkSize {
			return Cmd{}, fmt.Errorf("relay command %q: bad length", line)
		}
		return Cmd{Op: 'C', Hash: f[1], Len: n}, nil
	case len(f) == 3 && f[0] == "F" && validHash(f[1]):
		if _, _, err := net.SplitHostPort(f[2]); err != nil {
			return Cmd{}, fmt.Errorf("relay command %q: %w", line, err)
		}
		return Cmd{Op: 'F', Hash: f[1], Addr: f[2]}, nil
	}
	return Cmd{}, fmt.Errorf("relay command %q: not understood", line)
}

// Event is one line an agent reports.
type Event struct {
	Kind string // listen, nolisten, have, bad, fail, done
	Hash string // the chunk (have, bad, fail) or the file (done)
	Addr string // the peer (bad, fail)
	Port int    // listen
	Msg  string // nolisten, fail
}

// The event kinds.
const (
	EvListen   = "listen"
	EvNoListen = "nolisten"
	EvHave     = "have"
	EvBad      = "bad"
	EvFail     = "fail"
	EvDone     = "done"
	// EvReady follows the agent's report of what it already holds; the
	// controller schedules nothing for a host before it.
	EvReady = "ready"
)

// ParseEvent decodes an event line (without its newline). Events come
// from the host, so nothing in them is trusted beyond its syntax.
func ParseEvent(line string) (Event, error) {
	kind, rest, _ := strings.Cut(line, " ")
	bad := fmt.Errorf("relay event %q: not understood", line)
	switch kind {
	case EvListen:
		p, err := strconv.Atoi(rest)
		if err != nil || p < 1 || p > 65535 {
			return Event{}, bad
		}
		return Event{Kind: kind, Port: p}, nil
	case EvNoListen:
		return Event{Kind: kind, Msg: rest}, nil
	case EvReady:
		if rest != "" {
			return Event{}, bad
		}
		return Event{Kind: kind}, nil
	case EvHave, EvDone:
		if !validHash(rest) {
			return Event{}, bad
		}
		return Event{Kind: kind, Hash: rest}, nil
	case EvBad, EvFail:
		f := strings.SplitN(rest, " ", 3)
		if len(f) < 2 || !validHash(f[0]) {
			return Event{}, bad
		}
		e := Event{Kind: kind, Hash: f[0], Addr: f[1]}
		if len(f) == 3 {
			e.Msg = f[2]
		}
		return e, nil
	}
	return Event{}, bad
}

// String is the event's line, without a newline.
func (e Event) String() string {
	switch e.Kind {
	case EvListen:
		return fmt.Sprintf("%s %d", e.Kind, e.Port)
	case EvNoListen:
		return e.Kind + " " + oneLine(e.Msg)
	case EvReady:
		return e.Kind
	case EvBad:
		return fmt.Sprintf("%s %s %s", e.Kind, e.Hash, e.Addr)
	case EvFail:
		return fmt.Sprintf("%s %s %s %s", e.Kind, e.Hash, e.Addr, oneLine(e.Msg))
	}
	return e.Kind + " " + e.Hash
}

func oneLine(s string) string { return strings.NewReplacer("\n", " ", "\r", " ").Replace(s) }

// readLine reads one line of at most max bytes, without its newline.
func readLine(r *bufio.Reader, max int) (string, error) {
	var b []byte
	for {
		part, more, err := r.ReadLine()
		if err != nil {
			return "", err
		}
		b = append(b, part...)
		if len(b) > max {
			return "", fmt.Errorf("relay line longer than %d bytes", max)
		}
		if !more {
			return string(b), nil
		}
	}
}
