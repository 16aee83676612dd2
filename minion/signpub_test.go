package minion_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/master"
	"github.com/brinesalt/brine/minion"
	"github.com/brinesalt/brine/thin/frame"
)

// TestUnsignedPublications is a master with sign_pub_messages: False:
// a minion with Brine's default (sign_pub_messages True) refuses its
// unsigned publications, one with sign_pub_messages: False runs them,
// as Salt's minion does by default.
func TestUnsignedPublications(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	mm := newMMaster(t, ctx, dir+"/m", dir+"/m/pki", func(o *master.Options) { o.SignPubMessages = false })
	for _, c := range []struct {
		id      string
		require bool
	}{{"strict", true}, {"lax", false}} {
		cfg := mmMinionConfig(dir, c.id, mm.addr())
		if !cfg.SignPubMessages {
			t.Fatal("the minion's sign_pub_messages does not default to True")
		}
		cfg.SignPubMessages = c.require
		mn, err := minion.New(minion.Options{Config: cfg, Execute: newBlocker().exec,
			Grains: func(context.Context) (*ordered.Map, error) { return ordered.New(), nil }})
		if err != nil {
			t.Fatal(err)
		}
		runAsync(t, ctx, mn.Run)
	}
	mm.waitSubscribers(t, ctx, 2)
	got := mm.ping(ctx, 3*time.Second)
	if got["lax"] == nil {
		t.Error("the minion with sign_pub_messages: False did not run an unsigned publication")
	}
	if got["strict"] != nil {
		t.Error("the minion with sign_pub_messages: True ran an unsigned publication")
	}
}

// TestConcurrentSignedPublicationsAllRun: publications the master signs
// concurrently reach the minion in serial order, so none is dropped as
// a replay (a minion drops a serial not above the last it took; before
// the master sent them in order, 57 of 64 ran).
func TestConcurrentSignedPublicationsAllRun(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	mm := newMMaster(t, ctx, dir+"/m", dir+"/m/pki", func(o *master.Options) { o.SignPubMessages = true })
	var ran atomic.Int64
	var mu sync.Mutex
	other := map[string]bool{}
	cfg := mmMinionConfig(dir, "m1", mm.addr())
	mn, err := minion.New(minion.Options{Config: cfg,
		Execute: func(_ context.Context, j *frame.Job) *frame.Result {
			if j.Fun == "test.ping" {
				ran.Add(1)
			} else {
				mu.Lock()
				other[j.Fun] = true
				mu.Unlock()
			}
			return &frame.Result{Return: true}
		},
		Grains: func(context.Context) (*ordered.Map, error) { return ordered.New(), nil }})
	if err != nil {
		t.Fatal(err)
	}
	runAsync(t, ctx, mn.Run)
	mm.waitSubscribers(t, ctx, 1)
	const n = 64
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, _, err := mm.m.Publish(ctx, master.PublishRequest{Tgt: "m1", Fun: "test.ping"}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for ran.Load() < n && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if got := ran.Load(); got != n {
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("%d of %d concurrently published jobs ran (other functions run: %v)", got, n, other)
	}
}
