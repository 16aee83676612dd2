package main

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"
)

// floorChunk is the relay's chunk size (relay.DefaultChunkSize).
const floorChunk = 1 << 20

// floor measures what this machine needs, at the least, for the work a
// relay run does on every host, whoever does it: receive the release
// over TCP sealed with AES-256-GCM (the peers' encryption, both ends),
// hash it (sha256, the verification) and write it to disk (synced, as
// the relay syncs a file before its rename). On one machine all hosts
// share its cores and disk, so N hosts cost N times that however well
// the relay schedules: relay wall time is bounded below by the larger of
// this and size / uplink. It runs sample hosts, as many at once as
// there are cores, and scales to n.
type floorResult struct {
	name    string
	perHost time.Duration
}

func measureFloor(ctx context.Context, dir string, data []byte, sample int) ([]floorResult, error) {
	key := make([]byte, 32)
	blk, _ := aes.NewCipher(key)
	aead, _ := cipher.NewGCM(blk)
	steps := []struct {
		name string
		run  func(i int) error
	}{
		{"sha256 only", func(int) error { sha256.Sum256(data); return nil }},
		{"AES-GCM seal + open only", func(int) error { return sealOpen(aead, data) }},
		{"TCP receive + AES-GCM + sha256 + write (not synced)", func(i int) error { return pipeline(ctx, aead, data, filepath.Join(dir, fmt.Sprint(i)), false) }},
		{"TCP receive + AES-GCM + sha256 + write + fsync", func(i int) error { return pipeline(ctx, aead, data, filepath.Join(dir, fmt.Sprint(i)), true) }},
	}
	var out []floorResult
	for _, s := range steps {
		start := time.Now()
		if err := parallel(sample, s.run); err != nil {
			return nil, fmt.Errorf("floor %s: %w", s.name, err)
		}
		out = append(out, floorResult{s.name, time.Since(start) / time.Duration(sample)})
		os.RemoveAll(dir)
		os.MkdirAll(dir, 0o755)
	}
	return out, nil
}

// parallel runs f(0) … f(n-1), as many at once as there are cores,
// and returns the first error.
func parallel(n int, f func(int) error) error {
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			errs[i] = f(i)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func sealOpen(aead cipher.AEAD, data []byte) error {
	nonce := make([]byte, aead.NonceSize())
	buf := make([]byte, 0, floorChunk+aead.Overhead())
	for off := 0; off < len(data); off += floorChunk {
		sealed := aead.Seal(buf[:0], nonce, data[off:min(off+floorChunk, len(data))], nil)
		if _, err := aead.Open(sealed[:0], nonce, sealed, nil); err != nil {
			return err
		}
	}
	return nil
}

// pipeline sends data over loopback TCP in sealed chunks and receives it
// as an agent does: open, hash, write.
func pipeline(ctx context.Context, aead cipher.AEAD, data []byte, path string, fsync bool) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer ln.Close()
	var wg sync.WaitGroup
	var sendErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		c, err := ln.Accept()
		if err != nil {
			sendErr = err
			return
		}
		defer c.Close()
		nonce := make([]byte, aead.NonceSize())
		buf := make([]byte, 4, 4+floorChunk+aead.Overhead())
		for off := 0; off < len(data); off += floorChunk {
			sealed := aead.Seal(buf[:4], nonce, data[off:min(off+floorChunk, len(data))], nil)
			binary.BigEndian.PutUint32(sealed, uint32(len(sealed)-4))
			if _, err := c.Write(sealed); err != nil {
				sendErr = err
				return
			}
		}
	}()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", ln.Addr().String())
	if err != nil {
		return err
	}
	defer c.Close()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	nonce := make([]byte, aead.NonceSize())
	buf := make([]byte, floorChunk+aead.Overhead())
	var head [4]byte
	for got := 0; got < len(data); {
		if _, err := io.ReadFull(c, head[:]); err != nil {
			return err
		}
		sealed := buf[:binary.BigEndian.Uint32(head[:])]
		if _, err := io.ReadFull(c, sealed); err != nil {
			return err
		}
		plain, err := aead.Open(sealed[:0], nonce, sealed, nil)
		if err != nil {
			return err
		}
		h.Write(plain)
		if _, err := f.Write(plain); err != nil {
			return err
		}
		got += len(plain)
	}
	if fsync {
		if err := f.Sync(); err != nil {
			return err
		}
	}
	wg.Wait()
	return sendErr
}

// printFloor prints the floor for every size the run reports.
func printFloor(res []floorResult, sample, mib int, sizes ...int) {
	fmt.Printf("\n#### This machine's floor for the hosts' work (%d MiB per host, %d sample hosts, %d at a time, scaled to N)\n\n",
		mib, sample, runtime.GOMAXPROCS(0))
	fmt.Print("| work per host | per host |")
	for _, n := range sizes {
		fmt.Printf(" × %d hosts |", n)
	}
	fmt.Print("\n|---|---|")
	for range sizes {
		fmt.Print("---|")
	}
	fmt.Println()
	for _, r := range res {
		fmt.Printf("| %s | %.1f ms |", r.name, float64(r.perHost.Microseconds())/1000)
		for _, n := range sizes {
			fmt.Printf(" %.1f s |", (r.perHost * time.Duration(n)).Seconds())
		}
		fmt.Println()
	}
}
