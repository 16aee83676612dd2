package transport

import (
	"bytes"
	"net"
	"testing"
	"time"
)

// FuzzReadMessage feeds arbitrary bytes to the frame reader as a fresh
// peer: no message may exceed the limit, and every byte taken from the
// budget must come back.
func FuzzReadMessage(f *testing.F) {
	f.Add([]byte{0, 3, 'a', 'b', 'c'})
	f.Add([]byte{1, 0, 0, 2, 'h', 'i'})
	f.Add([]byte{4, 6, 5, 'R', 'E', 'A', 'D', 'Y'})
	f.Add([]byte{2, 0, 0, 0, 0, 0, 0, 0, 1, 'x'})
	f.Add([]byte{2, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{3, 0, 0, 0, 0, 0, 0, 0x80, 0, 'x', 'y'})
	f.Add([]byte{4, 5, 4, 'P', 'I', 'N', 'G'})
	f.Fuzz(func(t *testing.T, data []byte) {
		a, b := net.Pipe()
		defer a.Close()
		go func() { b.Write(data); b.Close() }()
		c := &Conn{nc: a, r: newReader(a), max: 1 << 16}
		const total = 40 << 10
		bud := newBudget(total)
		lim := msgLimit{max: c.max, budget: bud, free: 1 << 10}
		for {
			frames, cmd, charged, err := c.readMessage(lim)
			if err != nil {
				break
			}
			n := 0
			for _, f := range frames {
				n += len(f)
			}
			if n > c.max {
				t.Fatalf("message of %d bytes over the limit", n)
			}
			if want := int64(max(0, n-lim.free)); charged < want {
				t.Fatalf("message of %d bytes charged %d", n, charged)
			}
			bud.give(charged)
			if cmd {
				if name, body, err := parseCommand(frames[0]); err == nil && name == "READY" {
					parseProps(body)
				}
			}
			Subscription(frames, cmd)
			splitEnvelope(frames)
		}
		if left := bud.left.Load(); left != total {
			t.Fatalf("budget %d after the reads, want %d back", left, total)
		}
	})
}

// FuzzGreeting checks the greeting parser on arbitrary 64-byte inputs:
// it accepts only ZMTP 3 with NULL.
func FuzzGreeting(f *testing.F) {
	f.Add(greeting())
	g31 := greeting()
	g31[11] = 1
	f.Add(g31)
	curve := greeting()
	copy(curve[12:32], "CURVE")
	f.Add(curve)
	f.Add(make([]byte, 64))
	f.Add(append([]byte{0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0x7f, 2}, make([]byte, 53)...))
	f.Fuzz(func(t *testing.T, g []byte) {
		minor, err := parseGreeting(g)
		if err != nil {
			return
		}
		if len(g) != 64 || g[0] != 0xff || g[9]&1 != 1 || g[10] < 3 || minor != g[11] ||
			string(bytes.TrimRight(g[12:32], "\x00")) != "NULL" {
			t.Fatalf("accepted %x", g)
		}
	})
}

// FuzzHandshake plays an arbitrary peer against Handshake: greeting,
// READY and its metadata. It must end with a connection or an error,
// never a panic or a hang.
func FuzzHandshake(f *testing.F) {
	ready := readyBody([][2]string{{"Socket-Type", TypeREQ}, {"Identity", "m1"}})
	f.Add(append(greeting(), appendHeader(nil, len(ready), flagCommand)...), ready)
	f.Add(greeting(), []byte{4, 6, 5, 'R', 'E', 'A', 'D', 'Y'})
	f.Add(greeting(), []byte{4, 12, 5, 'R', 'E', 'A', 'D', 'Y', 3, 'a', 'b', 'c'})
	f.Add(greeting()[:10], []byte{})
	f.Add(greeting(), []byte{6, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, greet, rest []byte) {
		a, b := net.Pipe()
		defer a.Close()
		go func() {
			defer b.Close()
			go func() {
				buf := make([]byte, 512)
				for {
					if _, err := b.Read(buf); err != nil {
						return
					}
				}
			}()
			b.Write(greet)
			b.Write(rest)
		}()
		c, err := Handshake(a, TypeROUTER, []byte("\x001"), 0, 5*time.Second)
		if err != nil {
			return
		}
		if c.Peer["Socket-Type"] != TypeREQ && c.Peer["Socket-Type"] != TypeDEALER && c.Peer["Socket-Type"] != TypeROUTER {
			t.Fatalf("accepted peer %q", c.Peer["Socket-Type"])
		}
	})
}
