package master

import (
	"bufio"
	"bytes"
	"context"
	"log/slog"
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
)

// FuzzHandle feeds arbitrary request frames to the request handler:
// whatever arrives, it answers (never panics) and never with a session.
func FuzzHandle(f *testing.F) {
	m, err := New(tempOptions(f), slog.New(slog.DiscardHandler))
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte("garbage"))
	f.Add(mustPack(ordered.FromPairs("enc", "clear", "load", ordered.FromPairs("cmd", "_auth", "id", "x", "pub", "nope"), "version", 3)))
	f.Add(mustPack(ordered.FromPairs("enc", "aes", "load", []byte("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"), "version", 3, "id", "m1")))
	f.Add(mustPack(ordered.FromPairs("enc", "pub", "load", 1)))
	f.Fuzz(func(t *testing.T, frame []byte) {
		reply := m.handle(context.Background(), "fuzz", frame)
		if reply == nil {
			t.Fatal("no reply")
		}
		if _, err := protocol.Unmarshal(reply); err != nil {
			t.Fatalf("reply does not decode: %v", err)
		}
	})
}

// FuzzLocalMessage feeds arbitrary bytes to the local socket reader.
func FuzzLocalMessage(f *testing.F) {
	var b bytes.Buffer
	writeMsg(&b, ordered.FromPairs("cmd", "publish", "tgt", "*"))
	f.Add(b.Bytes())
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{0, 0, 0, 1, 0xc1})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bufio.NewReader(bytes.NewReader(data))
		for {
			m, err := readMsg(r)
			if err != nil {
				return
			}
			publishFromMap(m)
		}
	})
}
