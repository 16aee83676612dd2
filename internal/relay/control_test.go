package relay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// controlRun is a coordinator taking agents that dial it over TCP, as a
// master takes its minions.
type controlRun struct {
	c    *Coordinator
	ln   net.Listener
	mu   sync.Mutex
	errs map[string]error
	wg   sync.WaitGroup
}

func startControl(t *testing.T, path, sum string) *controlRun {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &controlRun{c: newCoord(t), ln: ln, errs: map[string]error{}}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			r.wg.Add(1)
			go func() {
				defer r.wg.Done()
				id, err := r.c.JoinConn(context.Background(), conn, func(string) (map[string]string, error) {
					return map[string]string{sum: path}, nil
				})
				r.mu.Lock()
				r.errs[id] = err
				r.mu.Unlock()
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		r.c.Close()
		r.wg.Wait()
	})
	return r
}

func TestControlStreamRelay(t *testing.T) {
	path, sum := release(t, 12*testChunk+7)
	r := startControl(t, path, sum)
	key := r.c.Key()
	const n = 5
	dirs := make([]string, n)
	done := make([]chan string, n)
	errs := make(chan error, n)
	for i := range n {
		dirs[i], done[i] = t.TempDir(), make(chan string, 1)
		go func() {
			opts := AgentOptions{Dir: dirs[i], Mode: 0o600, Listen: "127.0.0.1:0", MaxServe: 4, Done: func(s string) { done[i] <- s }}
			errs <- RunAgentConn(context.Background(), opts, r.ln.Addr().String(), key, fmt.Sprintf("m%d", i))
		}()
	}
	for i := range n {
		select {
		case got := <-done[i]:
			if got != sum {
				t.Fatalf("m%d: done %s", i, got)
			}
		case <-time.After(60 * time.Second):
			t.Fatalf("m%d never finished", i)
		}
		checkFile(t, dirs[i], sum)
	}
	r.c.Close()
	for range n {
		if err := <-errs; err != nil {
			t.Errorf("agent: %v", err)
		}
	}
	s := r.c.Stats()
	if s.ControllerChunks != 13 || s.PeerChunks != (n-1)*13 {
		t.Errorf("stats %+v: want each of 13 chunks once from the controller", s)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for id, err := range r.errs {
		if err != nil {
			t.Errorf("%s: %v", id, err)
		}
	}
}

// An agent without the run's key is not answered, and learns nothing.
func TestControlStreamWrongKey(t *testing.T) {
	path, sum := release(t, 3*testChunk)
	r := startControl(t, path, sum)
	key := r.c.Key()
	key[0] ^= 1
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := RunAgentConn(ctx, AgentOptions{Dir: t.TempDir(), Mode: 0o600}, r.ln.Addr().String(), key, "intruder")
	if err == nil || !errors.Is(err, ErrCorrupt) && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("agent with a wrong key: %v", err)
	}
	if s := r.c.Stats(); s.ControllerChunks != 0 {
		t.Errorf("controller sent %d chunks to an intruder", s.ControllerChunks)
	}
}

// A minion that serves corrupt chunks over the minion-mode streams is
// caught by the hash, never trusted again, and the others still end
// with the whole file.
func TestControlStreamCorruptPeer(t *testing.T) {
	path, sum := release(t, 8*testChunk+99)
	r := startControl(t, path, sum)
	key := r.c.Key()
	run := func(id, dir string, tamper func([]byte) []byte, done chan string) chan error {
		errc := make(chan error, 1)
		go func() {
			opts := AgentOptions{Dir: dir, Mode: 0o600, Listen: "127.0.0.1:0", MaxServe: 4, tamper: tamper,
				Done: func(s string) { done <- s }}
			errc <- RunAgentConn(context.Background(), opts, r.ln.Addr().String(), key, id)
		}()
		return errc
	}
	wait := func(id string, done chan string) {
		t.Helper()
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			t.Fatalf("%s never finished", id)
		}
	}
	// The liar gets the whole file first, so it is every other minion's
	// first source.
	liarDone := make(chan string, 1)
	liar := run("liar", t.TempDir(), func(b []byte) []byte {
		b = append([]byte(nil), b...)
		b[len(b)/2] ^= 0xff
		return b
	}, liarDone)
	wait("liar", liarDone)
	var errs []chan error
	var dirs []string
	var dones []chan string
	for i := range 3 {
		dir, done := t.TempDir(), make(chan string, 1)
		dirs, dones = append(dirs, dir), append(dones, done)
		errs = append(errs, run(fmt.Sprintf("m%d", i), dir, nil, done))
	}
	for i, dir := range dirs {
		wait(fmt.Sprintf("m%d", i), dones[i])
		checkFile(t, dir, sum)
	}
	r.c.Close()
	for _, e := range append(errs, liar) {
		if err := <-e; err != nil {
			t.Errorf("agent: %v", err)
		}
	}
	s := r.c.Stats()
	if s.Corrupt == 0 || len(s.Distrusted) != 1 || s.Distrusted[0] != "liar" {
		t.Errorf("stats %+v: want the liar caught and distrusted", s)
	}
}
