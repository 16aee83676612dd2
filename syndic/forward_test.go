package syndic

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
	"github.com/brinesalt/brine/master"
)

// testSyndic is a syndic with two upper masters and no links, for the
// forwarder alone.
func testSyndic(t *testing.T) *Syndic {
	o := master.DefaultOptions()
	o.CacheDir = t.TempDir()
	c := &Config{ID: "syn1", Local: o, Failover: "ordered", Mode: "sync", JIDForwardCacheHWM: 2, JobCache: "local_cache", Retries: 3}
	s, err := New(c, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	for i, addr := range []string{"top1:4506", "top2:4506"} {
		s.uppers = append(s.uppers, &upper{idx: i, addr: addr, s: s, kick: make(chan struct{}, 1)})
	}
	return s
}

func ret(jid, id string) *ordered.Map {
	return ordered.FromPairs("cmd", "_return", "id", id, "success", true, "return", true, "retcode", 0, "jid", jid,
		"fun", "test.ping", "fun_args", []any{}, "_stamp", "2026-12-02T12:00:00.000000")
}

// TestSyndicReturnShape pins the batch as Minion._return_pub_multi
// sends it (salt/minion.py): one entry per jid with every minion's
// {return, retcode, success, fun_args}, arg, tgt and tgt_type None, the
// load only the first time, routed to the master the job came from.
func TestSyndicReturnShape(t *testing.T) {
	s := testSyndic(t)
	ctx := context.Background()
	const jid = "20261202120000000001"
	s.remember(jid, 1)
	f := s.fw
	f.event(ctx, "salt/job/"+jid+"/ret/l1", ret(jid, "l1"))
	f.event(ctx, "salt/job/"+jid+"/ret/l2", ret(jid, "l2"))
	f.event(ctx, "salt/job/"+jid+"/new", ordered.FromPairs("jid", jid, "minions", []any{"l1", "l2"}))
	f.event(ctx, "salt/auth", ordered.FromPairs("id", "l3", "act", "pend"))
	f.event(ctx, "salt/job/"+jid+"/ret/l9", ordered.FromPairs("retcode", 0, "id", "l9")) // no return: not forwarded
	f.forward(ctx)
	one := ordered.FromPairs("return", true, "retcode", 0, "success", true, "fun_args", []any{})
	want := ordered.FromPairs("id", "syn1", "jid", jid, "fun", "test.ping", "arg", nil, "tgt", nil, "tgt_type", nil,
		"load", ordered.New(), "return", ordered.FromPairs("l1", one, "l2", one.Copy()))
	top1, top2 := s.uppers[0], s.uppers[1]
	if len(top1.queue) != 0 || len(top2.queue) != 1 {
		t.Fatalf("queues: top1 %d, top2 %d; want the job's master (top2) only", len(top1.queue), len(top2.queue))
	}
	got, _ := protocol.Marshal(top2.queue[0])
	wantB, _ := protocol.Marshal(want)
	if d := cmp.Diff(string(wantB), string(got)); d != "" {
		t.Errorf("entry (-want +got):\n%s", d)
	}
	// Events go to every upper master, returns never among them.
	for _, u := range s.uppers {
		var tags []any
		for _, e := range u.events {
			tags = append(tags, e.(*ordered.Map).Value("tag"))
		}
		if d := cmp.Diff([]any{"salt/job/" + jid + "/new", "salt/auth"}, tags); d != "" {
			t.Errorf("%s events (-want +got):\n%s", u.addr, d)
		}
	}
	// A job of the lower master's own goes to the first master that is
	// not down (syndic_failover ordered).
	top1.down = true
	f.event(ctx, "salt/job/20261202120000000002/ret/l1", ret("20261202120000000002", "l1"))
	f.forward(ctx)
	if len(top2.queue) != 2 {
		t.Errorf("the local job's returns went to %d/%d", len(top1.queue), len(top2.queue))
	}
}

// TestJIDForwardCacheHWM: past syndic_jid_forward_cache_hwm the oldest
// jid is forgotten, as _process_event does.
func TestJIDForwardCacheHWM(t *testing.T) {
	s := testSyndic(t)
	for _, j := range []string{"20261202120000000003", "20261202120000000001", "20261202120000000002"} {
		s.fw.markSent(j)
	}
	if s.fw.sent["20261202120000000001"] || !s.fw.sent["20261202120000000002"] || !s.fw.sent["20261202120000000003"] {
		t.Errorf("jid_forward_cache: %v", s.fw.sent)
	}
}

// TestMasterIDReturns: a return of the lower master's own job goes to
// the upper master its master_id names (iter_master_options), with
// master_id in the entry; in cluster mode a return carrying this
// master's own master_id is not forwarded (_process_event).
func TestMasterIDReturns(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		mode, mid  string
		top1, top2 int
	}{
		{"sync", "top2", 0, 1},
		{"sync", "top2:4506", 0, 1},
		{"sync", "nobody", 1, 0},
		{"sync", "lower", 1, 0},
		{"cluster", "lower", 0, 0},
		{"cluster", "top2", 0, 1},
	} {
		s := testSyndic(t)
		s.c.Mode, s.c.Local.MasterID = tc.mode, "lower"
		const jid = "20261202120000000007"
		r := ret(jid, "l1")
		r.Set("master_id", tc.mid)
		s.fw.event(ctx, "salt/job/"+jid+"/ret/l1", r)
		s.fw.forward(ctx)
		top1, top2 := s.uppers[0], s.uppers[1]
		if len(top1.queue) != tc.top1 || len(top2.queue) != tc.top2 {
			t.Errorf("%s, master_id %s: queues top1 %d top2 %d, want %d %d", tc.mode, tc.mid, len(top1.queue), len(top2.queue), tc.top1, tc.top2)
			continue
		}
		for _, q := range [][]*ordered.Map{top1.queue, top2.queue} {
			if len(q) == 1 && q[0].Value("master_id") != tc.mid {
				t.Errorf("%s: entry master_id %v, want %s", tc.mid, q[0].Value("master_id"), tc.mid)
			}
		}
	}
}

// TestMasterIDRelay: a publication carrying this master's own master_id
// came from here and is not republished (Syndic._handle_decoded_payload);
// it never reaches the lower master's socket.
func TestMasterIDRelay(t *testing.T) {
	var log strings.Builder
	s := testSyndic(t)
	s.log = slog.New(slog.NewTextHandler(&log, nil))
	s.c.Local.MasterID = "lower"
	s.c.Local.SockDir = t.TempDir() // no master listens: a relay attempt would warn
	load := ordered.FromPairs("fun", "test.ping", "arg", []any{}, "tgt", "*", "jid", "20261202120000000008", "ret", "", "master_id", "lower")
	s.uppers[0].relay(context.Background(), load)
	if !strings.Contains(log.String(), "not relaying a job this master published") || strings.Contains(log.String(), "Unable to forward") {
		t.Errorf("log:\n%s", log.String())
	}
	log.Reset()
	load.Set("master_id", "top")
	s.uppers[0].relay(context.Background(), load)
	if !strings.Contains(log.String(), "Unable to forward") {
		t.Errorf("a job of another master_id was not relayed:\n%s", log.String())
	}
}
