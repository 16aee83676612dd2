package relay

import (
	"io"
	"net"
	"strings"
	"testing"
)

// The controller parses events from hosts, and the agent parses the
// controller's lines; neither may panic or accept what it cannot use.

func FuzzParseEvent(f *testing.F) {
	h := strings.Repeat("ab", 32)
	for _, s := range []string{"listen 4520", "nolisten address in use", "have " + h, "bad " + h + " 10.0.0.2:4520",
		"fail " + h + " 10.0.0.2:4520 connection refused", "done " + h, "ready", "listen 0", "have xyz", "fail " + h} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		ev, err := ParseEvent(line)
		if err != nil {
			return
		}
		if ev.Hash != "" && !validHash(ev.Hash) {
			t.Fatalf("%q: accepted hash %q", line, ev.Hash)
		}
		again, err := ParseEvent(ev.String())
		if err != nil || again.Kind != ev.Kind || again.Hash != ev.Hash {
			t.Fatalf("%q: %+v does not round-trip: %+v %v", line, ev, again, err)
		}
	})
}

func FuzzParseCmd(f *testing.F) {
	h := strings.Repeat("0f", 32)
	for _, s := range []string{"E", "C " + h + " 1024", "F " + h + " 10.0.0.3:4520", "C " + h + " -1", "F " + h + " nohost", "X"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		c, err := ParseCmd(line, 1<<20)
		if err != nil {
			return
		}
		if c.Len < 0 || c.Len > 1<<20 || (c.Op != 'E' && !validHash(c.Hash)) {
			t.Fatalf("%q: accepted %+v", line, c)
		}
	})
}

func FuzzParseHeader(f *testing.F) {
	f.Add(`{"key":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=","chunk_size":4,"files":[{"sum":"` + strings.Repeat("a", 64) +
		`","size":5,"chunks":["` + strings.Repeat("b", 64) + `","` + strings.Repeat("c", 64) + `"]}]}`)
	f.Add(`{"key":"","chunk_size":0}`)
	f.Add(`not json`)
	f.Fuzz(func(t *testing.T, line string) {
		h, err := ParseHeader([]byte(line))
		if err != nil {
			return
		}
		if len(h.Key) != KeySize || h.ChunkSize < 1 || h.ChunkSize > MaxChunkSize {
			t.Fatalf("%q: accepted %+v", line, h)
		}
		for _, f := range h.Files {
			if f.check(h.ChunkSize) != nil {
				t.Fatalf("%q: accepted file %+v", line, f)
			}
		}
	})
}

// The control stream's reader takes frames from the network: whatever
// arrives, it returns an error or bytes that were sealed under the key.
func FuzzControlFrames(f *testing.F) {
	key := make([]byte, KeySize)
	salt := make([]byte, saltLen)
	f.Add([]byte{0, 0, 0, 20, 1, 2, 3})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, wire []byte) {
		a, b := net.Pipe()
		defer a.Close()
		go func() {
			a.Write(wire)
			a.Close()
		}()
		s, err := newSealed(b, key, salt, false)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := io.ReadAll(s); err == nil && len(got) > 0 {
			t.Fatalf("opened %d bytes never sealed", len(got))
		}
	})
}
