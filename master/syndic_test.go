package master

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
)

// syndicMaster is a master of masters with direct1 and the syndic syn1
// accepted, and job jid saved as a publish would.
func syndicMaster(t testing.TB, jid string) *Master {
	o := tempOptions(t)
	o.OrderMasters = true
	m, err := New(o, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"direct1", "syn1"} {
		if err := os.WriteFile(filepath.Join(o.PKIDir, "minions", id), []byte("key"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	load := ordered.FromPairs("fun", "test.ping", "arg", []any{}, "tgt", "*", "jid", jid, "ret", "", "tgt_type", "glob", "user", "root")
	m.saveJobLoad(context.Background(), jid, load, []string{"direct1", "syn1"})
	return m
}

// syndicBatch is a _syndic_return as salt/minion.py _return_pub_multi
// sends it: arg, tgt and tgt_type None, the load the first time.
func syndicBatch(id, jid string, load *ordered.Map, minions ...string) *ordered.Map {
	rets := ordered.New()
	for _, mn := range minions {
		rets.Set(mn, ordered.FromPairs("return", true, "retcode", 0, "success", true, "fun_args", []any{}))
	}
	entry := ordered.FromPairs("id", id, "jid", jid, "fun", "test.ping", "arg", nil, "tgt", nil, "tgt_type", nil,
		"load", load, "return", rets)
	return ordered.FromPairs("cmd", protocol.CmdSyndicReturn, "load", []any{entry})
}

func TestSyndicReturn(t *testing.T) {
	const jid = "20261202120000000001"
	m := syndicMaster(t, jid)
	ctx := context.Background()
	ch, cancel := m.bus.Subscribe()
	defer cancel()

	// The lower master's salt/job/<jid>/new, forwarded with the pretag.
	ev := ordered.FromPairs("cmd", protocol.CmdMinionEvent, "id", "syn1", "pretag", "syndic/syn1", "events", []any{
		ordered.FromPairs("data", ordered.FromPairs("jid", jid, "minions", []any{"l1", "l2"}), "tag", "salt/job/"+jid+"/new"),
	})
	m.onMinionEvent(ctx, "syn1", ev)
	lower := m.jobs.JIDDir(jid) + "/.minions.syn1.p"
	if _, err := os.Stat(lower); err != nil {
		t.Fatalf("the syndic's minions are not stored: %v", err)
	}
	if got := m.onSyndicReturn(ctx, "syn1", syndicBatch("syn1", jid, ordered.FromPairs("fun", "test.ping", "tgt", "*", "tgt_type", "glob", "jid", jid), "l1", "l2")); got != true {
		t.Fatalf("_syndic_return answered %v", got)
	}
	// An entry in another syndic's name is dropped.
	m.onSyndicReturn(ctx, "syn1", syndicBatch("syn2", jid, nil, "l9"))

	var tags []string
	for len(ch) > 0 {
		e := <-ch
		tags = append(tags, e.Tag)
		if e.Tag == protocol.JobReturnTag(jid, "l1") && (e.Data.Has("cmd") || e.Data.Value("fun") != "test.ping") {
			t.Errorf("relayed return event: %v", e.Data)
		}
	}
	want := []string{"salt/job/" + jid + "/new", "syndic/syn1/salt/job/" + jid + "/new",
		protocol.JobReturnTag(jid, "l1"), protocol.JobReturnTag(jid, "l2")}
	if d := cmp.Diff(want, tags); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
	rets, err := m.jobs.GetJID(ctx, jid)
	if err != nil || !rets.Has("l1") || !rets.Has("l2") || rets.Has("l9") {
		t.Errorf("job cache returns: %v %v", rets.Keys(), err)
	}
	l, err := m.jobs.GetLoad(ctx, jid)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]any{"direct1", "l1", "l2", "syn1"}, l.Value("Minions")); d != "" {
		t.Errorf("list_job's Minions (-want +got):\n%s", d)
	}
	all, relays := m.Syndics()
	if !slices.Equal(all, []string{"syn1"}) || !slices.Equal(relays, []string{"syn1"}) {
		t.Errorf("Syndics() = %v, %v", all, relays)
	}
}

// TestSyndicRelayWithMinionData: Salt's salt-syndic fetches its pillar
// as any minion does, so the top caches grains and pillar for it; it is
// still a relay (not expected to return, never reported missing) until
// it sends a _return of its own, as a minion with the syndic's id does.
func TestSyndicRelayWithMinionData(t *testing.T) {
	const jid = "20261202120000000004"
	m := syndicMaster(t, jid)
	m.storeData("syn1", minionData{Grains: ordered.FromPairs("id", "syn1"), Pillar: ordered.New()})
	if got := m.onSyndicReturn(context.Background(), "syn1", syndicBatch("syn1", jid, nil, "l1")); got != true {
		t.Fatalf("_syndic_return answered %v", got)
	}
	if all, relays := m.Syndics(); !slices.Equal(all, []string{"syn1"}) || !slices.Equal(relays, []string{"syn1"}) {
		t.Errorf("with minion data cached: Syndics() = %v, %v; want [syn1] [syn1]", all, relays)
	}
	m.noteSelfReturn("syn1")
	if all, relays := m.Syndics(); !slices.Equal(all, []string{"syn1"}) || len(relays) != 0 {
		t.Errorf("after its own _return: Syndics() = %v, %v; want [syn1] []", all, relays)
	}
}

func TestSyndicReturnRefusedWithoutOrderMasters(t *testing.T) {
	const jid = "20261202120000000002"
	m := syndicMaster(t, jid)
	m.o.OrderMasters = false
	if got := m.onSyndicReturn(context.Background(), "syn1", syndicBatch("syn1", jid, nil, "l1")); got != false {
		t.Fatalf("answered %v", got)
	}
	if rets, _ := m.jobs.GetJID(context.Background(), jid); rets.Len() != 0 {
		t.Fatalf("returns stored: %v", rets.Keys())
	}
	if _, err := os.Stat(filepath.Join(m.o.syndicDir(), "syn1")); err == nil {
		t.Fatal("syndic registered")
	}
}

// FuzzSyndicReturn feeds arbitrary loads as a syndic's _syndic_return
// and _minion_event: nothing panics, and nothing is stored outside the
// job cache.
func FuzzSyndicReturn(f *testing.F) {
	const jid = "20261202120000000003"
	m := syndicMaster(f, jid)
	f.Add(mustPack(syndicBatch("syn1", jid, ordered.FromPairs("tgt", "*"), "l1")))
	f.Add(mustPack(syndicBatch("syn1", "../../x", nil, "../y")))
	f.Add(mustPack(ordered.FromPairs("cmd", "_syndic_return", "load", "nope")))
	f.Add(mustPack(ordered.FromPairs("cmd", "_minion_event", "pretag", "syndic/syn1", "events", []any{ordered.FromPairs("tag", jid, "data", ordered.FromPairs("jid", "../z", "minions", []any{1}))})))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := protocol.Unmarshal(b)
		if err != nil {
			return
		}
		load, ok := v.(*ordered.Map)
		if !ok {
			return
		}
		m.onSyndicReturn(context.Background(), "syn1", load)
		m.onMinionEvent(context.Background(), "syn1", load)
	})
}
