package minion_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/config"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/master"
	"github.com/brinesalt/brine/minion"
)

// cluster is a real master and minions on loopback sockets in this
// process.
type cluster struct {
	dir     string
	m       *master.Master
	mo      master.Options
	ctx     context.Context
	minions map[string]*minion.Minion
	confs   map[string]*config.Minion
}

// startMaster starts a master with file_roots dir/srv and pillar_roots
// dir/pillar.
func startCluster(t testing.TB) *cluster {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	mo := master.DefaultOptions()
	mo.Interface, mo.PublishPort, mo.RetPort = "127.0.0.1", port(t), port(t)
	mo.PKIDir, mo.CacheDir, mo.SockDir = dir+"/pki", dir+"/cache", dir+"/sock"
	mo.FileRoots, mo.PillarRoots = map[string][]string{"base": {dir + "/srv"}}, map[string][]string{"base": {dir + "/pillar"}}
	mo.Auth.AutoAccept = true
	mo.Timeout = 10 * time.Second
	m, err := master.New(mo, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Stop)
	return &cluster{dir: dir, m: m, mo: mo, ctx: ctx, minions: map[string]*minion.Minion{}, confs: map[string]*config.Minion{}}
}

// minionConfig is the configuration of minion id against the cluster's
// master, with its own pki_dir and cachedir.
func (c *cluster) minionConfig(id string) *config.Minion {
	mc := config.DefaultMinion(filepath.Join(c.dir, "etc-"+id))
	mc.ID, mc.Masters, mc.MasterPort, mc.PublishPort = id, []string{"127.0.0.1"}, c.mo.RetPort, c.mo.PublishPort
	mc.PKIDir, mc.CacheDir = filepath.Join(c.dir, "pki-"+id), filepath.Join(c.dir, "cache-"+id)
	mc.AcceptanceWaitTime = 200 * time.Millisecond
	return mc
}

// start runs minions with the given grains until the test ends and
// waits until all of them subscribed.
func (c *cluster) start(t testing.TB, grains map[string]*ordered.Map, o func(*minion.Options)) {
	t.Helper()
	want := c.m.Subscribers() + len(grains)
	mctx, stop := context.WithCancel(c.ctx)
	var wg sync.WaitGroup
	t.Cleanup(func() { stop(); wg.Wait() })
	for id, g := range grains {
		mc := c.minionConfig(id)
		opts := minion.Options{Config: mc, Grains: func(context.Context) (*ordered.Map, error) { return g.Copy(), nil }}
		if o != nil {
			o(&opts)
		}
		mn, err := minion.New(opts)
		if err != nil {
			t.Fatal(err)
		}
		c.minions[id], c.confs[id] = mn, mc
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := mn.Run(mctx); err != nil {
				t.Errorf("minion %s: %v", id, err)
			}
		}()
	}
	for c.m.Subscribers() < want {
		if c.ctx.Err() != nil {
			t.Fatal("minions did not connect")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// run calls a runner and fails the test on error.
func (c *cluster) run(t *testing.T, fun string, args ...any) *ordered.Map {
	t.Helper()
	kw := ordered.New()
	var pos []any
	for _, a := range args {
		if p, ok := a.([2]any); ok {
			kw.Set(p[0], p[1])
			continue
		}
		pos = append(pos, a)
	}
	v, err := c.m.Runner(c.ctx, fun, pos, kw)
	if err != nil {
		t.Fatalf("%s: %v", fun, err)
	}
	m, ok := v.(*ordered.Map)
	if !ok {
		t.Fatalf("%s returned %T", fun, v)
	}
	return m
}

func idsOf(m *ordered.Map) string {
	var ids []string
	for _, k := range m.Keys() {
		ids = append(ids, ordered.KeyString(k))
	}
	return fmt.Sprint(ids)
}
