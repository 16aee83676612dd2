package minion_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/config"
	"github.com/brinesalt/brine/master"
	"github.com/brinesalt/brine/minion"
)

// TestMasterID: a master with master_id puts it on every publication
// and the minion echoes it in its return (salt/master.py publish,
// salt/minion.py _thread_return), and the return event carries it; a
// publisher's own master_id (a syndic relaying its
// upper master's job) wins over the master's. The minion finds its
// master with master_uri_format ip_only (the address alone, master_port).
func TestMasterID(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	m, mo := startAutoAcceptMaster(ctx, t, dir, func(mo *master.Options) { mo.MasterID = "lower-a" })
	c := config.DefaultMinion(dir)
	c.ID, c.Masters, c.MasterPort, c.PublishPort = "m1", []string{"127.0.0.1"}, mo.RetPort, mo.PublishPort
	c.PKIDir, c.CacheDir = dir+"/minion", dir+"/mcache"
	c.AcceptanceWaitTime = 200 * time.Millisecond
	c.MasterURIFormat = "ip_only" // the address alone, with master_port
	mn, err := minion.New(minion.Options{Config: c})
	if err != nil {
		t.Fatal(err)
	}
	mctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); mn.Run(mctx) }()
	defer func() { stop(); wg.Wait() }()
	for m.Subscribers() < 1 {
		if ctx.Err() != nil {
			t.Fatal("the minion did not connect")
		}
		time.Sleep(20 * time.Millisecond)
	}
	cl, err := master.Dial(ctx, mo.LocalSocket())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for _, tc := range []struct{ given, want string }{{"", "lower-a"}, {"top", "top"}} {
		ch, unsub := m.Bus().Subscribe()
		jid, _, err := cl.Publish(ctx, master.PublishRequest{Tgt: "m1", Fun: "test.ping", MasterID: tc.given})
		if err != nil {
			t.Fatal(err)
		}
		var got any
	wait:
		for {
			select {
			case ev := <-ch:
				if strings.HasPrefix(ev.Tag, "salt/job/"+jid+"/ret/") {
					got = ev.Data.Value("master_id")
					break wait
				}
			case <-ctx.Done():
				t.Fatalf("no return of %s", jid)
			}
		}
		unsub()
		if got != tc.want {
			t.Errorf("publisher's master_id %q: the return carries %v, want %s", tc.given, got, tc.want)
		}
	}
}
