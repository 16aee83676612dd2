package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"io"
	"sync/atomic"
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
)

// TestPrepareChunks reassembles what salt-cp would send: the chunks in
// order, offsets continuous, the hash only on the last, and at least one
// chunk for an empty file.
func TestPrepareChunks(t *testing.T) {
	for _, tc := range []struct {
		size, chunk int
		gzip        bool
		wantChunks  int
	}{
		{0, 10, true, 1}, {10, 10, false, 1}, {25, 10, true, 3}, {30, 10, false, 3}, {100000, 4096, true, 25},
	} {
		data := bytes.Repeat([]byte("0123456789abcdefghij"), tc.size/20+1)[:tc.size]
		c := &saltCP{chunkSize: tc.chunk, o: options{noCompression: !tc.gzip}}
		var got []byte
		n := 0
		for p := range c.prepare(context.Background(), bytes.NewReader(data), "/d/f", 0o640, "tid") {
			if p.err != nil {
				t.Fatal(p.err)
			}
			n++
			kw := p.args[1].(*ordered.Map)
			if p.args[0] != "/d/f" || kw.Value("transfer") != "tid" || kw.Value("offset") != int64(len(got)) ||
				kw.Value("append") != (n > 1) || kw.Value("mode") != 0o640 || kw.Value("compressed") != tc.gzip {
				t.Fatalf("size %d chunk %d: args %v", tc.size, n, kw)
			}
			b, err := base64.StdEncoding.DecodeString(kw.Value("chunk").(string))
			if err != nil {
				t.Fatal(err)
			}
			if tc.gzip {
				zr, err := gzip.NewReader(bytes.NewReader(b))
				if err != nil {
					t.Fatal(err)
				}
				b, _ = io.ReadAll(zr)
			}
			got = append(got, b...)
			sum := sha256.Sum256(data)
			if hash, ok := kw.Get("hash"); ok != p.last || (p.last && hash != "sha256:"+hex.EncodeToString(sum[:])) {
				t.Fatalf("size %d chunk %d: last %v hash %v", tc.size, n, p.last, hash)
			}
		}
		if n != tc.wantChunks || !bytes.Equal(got, data) {
			t.Errorf("size %d: %d chunks, %d bytes back", tc.size, n, len(got))
		}
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// TestPrepareStops: a sender that gives up ends the preparing goroutine:
// the channel closes, the file is not read on to its end, and no last
// chunk (the one with the hash) is ever prepared. A goroutine that ignored
// ctx would read all 1000 one-byte chunks and hand over the last one.
func TestPrepareStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	c := &saltCP{chunkSize: 1, o: options{noCompression: true}}
	f := &countingReader{r: bytes.NewReader(make([]byte, 1000))}
	ch := c.prepare(ctx, f, "/d", 0o600, "t")
	if p := <-ch; p.err != nil || p.index != 1 || p.last {
		t.Fatalf("first chunk: %+v", p)
	}
	cancel()
	got := 1
	for p := range ch { // ends only when the goroutine closes the channel
		got++
		if p.last {
			t.Fatalf("chunk %d of 1000 is the last: the goroutine kept reading after cancel", p.index)
		}
	}
	// The goroutine reads one or two chunks ahead and has two in the
	// channel; after cancel a send that is ready at the same time as
	// ctx.Done may still win now and then, never a hundred times running.
	if n := f.n.Load(); n >= 100 {
		t.Errorf("read %d of 1000 bytes (%d chunks received) after the sender gave up", n, got)
	}
}
