package minion_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/config"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/minion"
	"github.com/brinesalt/brine/state/target"
)

// TestRefresh runs a master and a minion in one process: RefreshPillar
// brings the master's new pillar to the running minion and its grains
// to the master's data cache (-I and -G targeting), and
// grains_refresh_every gathers changed grains by itself and tells the
// master, as Salt's grains_refresh event does.
func TestRefresh(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	os.MkdirAll(dir+"/pillar", 0o700)
	writePillar := func(color string) {
		os.WriteFile(filepath.Join(dir, "pillar/top.sls"), []byte("base:\n  '*':\n    - p\n"), 0o600)
		os.WriteFile(filepath.Join(dir, "pillar/p.sls"), []byte("color: "+color+"\n"), 0o600)
	}
	writePillar("red")
	m, mo := startAutoAcceptMaster(ctx, t, dir)

	c := config.DefaultMinion(dir)
	// 0.005 minutes: 300 ms.
	if err := c.Apply(ordered.FromPairs("grains_refresh_every", 0.005), nil); err != nil {
		t.Fatal(err)
	}
	c.ID, c.Masters, c.MasterPort, c.PublishPort = "m1", []string{"127.0.0.1"}, mo.RetPort, mo.PublishPort
	c.PKIDir, c.CacheDir = dir+"/minion", dir+"/mcache"
	c.AcceptanceWaitTime = 200 * time.Millisecond
	var role atomic.Value
	role.Store("web")
	mn, err := minion.New(minion.Options{Config: c, Grains: func(context.Context) (*ordered.Map, error) {
		return ordered.FromPairs("role", role.Load()), nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	mctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := mn.Run(mctx); err != nil {
			t.Errorf("minion: %v", err)
		}
	}()
	defer func() { stop(); wg.Wait() }()
	matches := func(tgt string, kind target.Kind) bool {
		ids, err := m.CheckMinions(tgt, kind, "")
		return err == nil && slices.Contains(ids, "m1")
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for !cond() {
			if ctx.Err() != nil {
				t.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	// The minion subscribes after its first pillar; before that the
	// master, greedy, expects a minion it has no data for anyway.
	waitFor("the minion to subscribe", func() bool { return m.Subscribers() > 0 })
	if !matches("color:red", target.Pillar) || matches("color:blue", target.Pillar) || matches("role:db", target.Grain) {
		t.Fatal("the master's data cache does not have the first pillar and grains")
	}

	writePillar("blue")
	if err := mn.RefreshPillar(ctx); err != nil {
		t.Fatal(err)
	}
	if !matches("color:blue", target.Pillar) || matches("color:red", target.Pillar) {
		t.Fatal("the master's data cache does not have the refreshed pillar")
	}

	role.Store("db")
	waitFor("grains_refresh_every to bring role:db to the master", func() bool { return matches("role:db", target.Grain) })
}
