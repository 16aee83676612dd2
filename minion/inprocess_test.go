package minion_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/config"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/master"
	"github.com/brinesalt/brine/minion"
	_ "github.com/brinesalt/brine/state/modules/test"
)

func port(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startAutoAcceptMaster starts an auto_accept master on loopback in
// dir, stopped when the test ends.
func startAutoAcceptMaster(ctx context.Context, t *testing.T, dir string, tweaks ...func(*master.Options)) (*master.Master, master.Options) {
	mo := master.DefaultOptions()
	mo.Interface, mo.PublishPort, mo.RetPort = "127.0.0.1", port(t), port(t)
	mo.PKIDir, mo.CacheDir, mo.SockDir = dir+"/pki", dir+"/cache", dir+"/sock"
	mo.FileRoots, mo.PillarRoots = map[string][]string{"base": {dir + "/srv"}}, map[string][]string{"base": {dir + "/pillar"}}
	mo.Auth.AutoAccept = true
	for _, tweak := range tweaks {
		tweak(&mo)
	}
	m, err := master.New(mo, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Stop)
	return m, mo
}

// TestInProcess runs a master and three minions in one process (so the
// race detector sees both sides) and pings them twice.
func TestInProcess(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	m, mo := startAutoAcceptMaster(ctx, t, dir)
	mctx, stopMinions := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { stopMinions(); wg.Wait() }()
	for i := range 3 {
		c := config.DefaultMinion(dir)
		c.ID, c.Masters, c.MasterPort, c.PublishPort = fmt.Sprintf("m%d", i), []string{"127.0.0.1"}, mo.RetPort, mo.PublishPort
		c.PKIDir, c.CacheDir = fmt.Sprintf("%s/minion%d", dir, i), fmt.Sprintf("%s/cache%d", dir, i)
		c.AcceptanceWaitTime = 200 * time.Millisecond
		g := ordered.FromPairs("role", "web")
		mn, err := minion.New(minion.Options{Config: c, Grains: func(context.Context) (*ordered.Map, error) { return g.Copy(), nil }})
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := mn.Run(mctx); err != nil {
				t.Errorf("minion: %v", err)
			}
		}()
	}
	for m.Subscribers() < 3 {
		if ctx.Err() != nil {
			t.Fatal("minions did not connect")
		}
		time.Sleep(20 * time.Millisecond)
	}
	for range 2 {
		ch, unsub := m.Bus().Subscribe()
		jid, minions, err := m.Publish(t.Context(), master.PublishRequest{Tgt: "role:web", TgtType: "grain", Fun: "test.ping"})
		if err != nil || len(minions) != 3 {
			t.Fatalf("publish: %v %v", minions, err)
		}
		got := map[string]bool{}
		for len(got) < 3 {
			select {
			case ev := <-ch:
				if strings.HasPrefix(ev.Tag, "salt/job/"+jid+"/ret/") && ev.Data.Value("return") == true {
					got[ev.Data.Value("id").(string)] = true
				}
			case <-ctx.Done():
				t.Fatalf("returns: %v", got)
			}
		}
		unsub()
	}
}

// TestStartGate: minions sharing a StartGate do not sign in while its
// slots are taken, and all start, one at a time, once one is free.
func TestStartGate(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	m, mo := startAutoAcceptMaster(ctx, t, dir)
	gate := make(chan struct{}, 1)
	gate <- struct{}{} // the test holds the only slot
	mctx, stopMinions := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { stopMinions(); wg.Wait() }()
	for i := range 3 {
		c := config.DefaultMinion(dir)
		c.ID, c.Masters, c.MasterPort, c.PublishPort = fmt.Sprintf("g%d", i), []string{"127.0.0.1"}, mo.RetPort, mo.PublishPort
		c.PKIDir, c.CacheDir = fmt.Sprintf("%s/minion%d", dir, i), fmt.Sprintf("%s/cache%d", dir, i)
		c.AcceptanceWaitTime = 200 * time.Millisecond
		mn, err := minion.New(minion.Options{Config: c, StartGate: gate,
			Grains: func(context.Context) (*ordered.Map, error) { return ordered.New(), nil }})
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := mn.Run(mctx); err != nil {
				t.Errorf("minion: %v", err)
			}
		}()
	}
	time.Sleep(500 * time.Millisecond)
	if ids := m.Accepted(); len(ids) != 0 {
		t.Fatalf("minions signed in while the gate was held: %v", ids)
	}
	<-gate
	for m.Subscribers() < 3 {
		if ctx.Err() != nil {
			t.Fatalf("after the gate opened only %d of 3 minions connected", m.Subscribers())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(gate) != 0 {
		t.Errorf("a started minion still holds a gate slot")
	}
}
