package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"io"
	"testing"

	"github.com/brinesalt/brine/state/ordered"
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

// TestPrepareStops: a sender that gives up ends the preparing goroutine.
func TestPrepareStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	c := &saltCP{chunkSize: 1, o: options{noCompression: true}}
	ch := c.prepare(ctx, bytes.NewReader(make([]byte, 1000)), "/d", 0o600, "t")
	<-ch
	cancel()
	for range ch {
	}
}
