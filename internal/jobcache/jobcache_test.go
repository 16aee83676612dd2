package jobcache

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
)

func TestCache(t *testing.T) {
	c := New(t.TempDir())
	ctx := context.Background()
	jid := "20261201020304123456"
	if err := c.Returner(ctx, (&protocol.Return{ID: "m1", JID: jid}).SaltMap()); !errors.Is(err, ErrUnknownJob) {
		t.Fatalf("return before load: %v", err)
	}
	load := ordered.FromPairs("fun", "test.ping", "arg", []any{}, "tgt", "*", "jid", jid)
	if err := c.SaveLoad(ctx, jid, load, []string{"m1", "m2"}); err != nil {
		t.Fatal(err)
	}
	// Salt's layout: jobs/<sha256[:2]>/<sha256[2:]>/{jid,.load.p,.minions.p}.
	dir := c.JIDDir(jid)
	if len(filepath.Base(filepath.Dir(dir))) != 2 || len(filepath.Base(dir)) != 62 {
		t.Fatalf("jid dir %s", dir)
	}
	for _, f := range []string{"jid", LoadP, MinionsP} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Returner(ctx, (&protocol.Return{ID: "m1", JID: jid, Return: true, Success: true, Out: "nested"}).SaltMap()); err != nil {
		t.Fatal(err)
	}
	if err := c.Returner(ctx, (&protocol.Return{ID: "m1", JID: jid, Return: false}).SaltMap()); !errors.Is(err, ErrDuplicate) {
		t.Fatalf("duplicate: %v", err)
	}
	if err := c.Returner(ctx, (&protocol.Return{ID: "../x", JID: jid}).SaltMap()); !errors.Is(err, protocol.ErrBadLoad) {
		t.Fatalf("id with a slash: %v", err)
	}
	rets, err := c.GetJID(ctx, jid)
	m1, _ := rets.Value("m1").(*ordered.Map)
	if err != nil || rets.Len() != 1 || m1.Value("return") != true || m1.Value("out") != "nested" || m1.Value("success") != true {
		t.Fatalf("returns = %+v, %v", rets, err)
	}
	l, err := c.GetLoad(ctx, jid)
	if err != nil || l.Value("fun") != "test.ping" || len(l.Value("Minions").([]any)) != 2 {
		t.Fatalf("load = %v, %v", l, err)
	}
	if _, err := c.GetLoad(ctx, "20000101000000000000"); !errors.Is(err, ErrUnknownJob) {
		t.Fatalf("unknown load: %v", err)
	}
	if j, err := New(t.TempDir()).PrepJID(ctx, ""); err != nil || !IsJID(j) {
		t.Fatalf("prep_jid = %q, %v", j, err)
	}
	if got := c.JIDs(); len(got) != 1 || got[0] != jid {
		t.Fatalf("jids = %v", got)
	}
	jt, _ := JIDTime(jid)
	if n, err := c.Clean(time.Hour, jt.Add(30*time.Minute)); err != nil || n != 0 {
		t.Fatalf("clean young: %d %v", n, err)
	}
	if n, err := c.Clean(time.Hour, jt.Add(2*time.Hour)); err != nil || n != 1 {
		t.Fatalf("clean old: %d %v", n, err)
	}
	if got := c.JIDs(); len(got) != 0 {
		t.Fatalf("after clean: %v", got)
	}
	if FormatJIDTime(jid) != "2026, Dec 01 02:03:04.123456" {
		t.Fatalf("FormatJIDTime = %q", FormatJIDTime(jid))
	}
}

// FuzzJIDTimeFast: wherever the digit-by-digit layout answers, it is
// what the time parser and Format make of the jid.
func FuzzJIDTimeFast(f *testing.F) {
	for _, s := range []string{"20261201020304123456", "20260228235959999999", "20260229000000000000", "2026130102030412345x", "20261201020304123456_77"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, jid string) {
		fast, ok := jidTimeFast(jid)
		if !ok {
			return
		}
		tm, err := JIDTime(jid)
		if err != nil {
			t.Fatalf("fast path took %q, which the parser refuses: %v", jid, err)
		}
		if slow := tm.Format("2006, Jan 02 15:04:05") + "." + jid[14:20]; slow != fast {
			t.Fatalf("%q: fast %q, parser %q", jid, fast, slow)
		}
	})
}

// TestGetJIDsSeesRewrites: get_jids reuses the loads it decoded before
// only while their files are unchanged; a load saved again, a job
// removed and a job added all show in the next answer.
func TestGetJIDsSeesRewrites(t *testing.T) {
	c := New(t.TempDir())
	ctx := context.Background()
	jids := []string{"20261201020304000001", "20261201020304000002"}
	old := time.Now().Add(-time.Hour)
	for _, jid := range jids {
		if err := c.SaveLoad(ctx, jid, ordered.FromPairs("fun", "test.ping", "jid", jid), nil); err != nil {
			t.Fatal(err)
		}
		// Old enough to be kept between calls.
		if err := os.Chtimes(filepath.Join(c.JIDDir(jid), LoadP), old, old); err != nil {
			t.Fatal(err)
		}
	}
	funs := func() map[string]any {
		jobs, err := c.GetJIDs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]any{}
		for _, j := range jobs {
			out[j.JID] = j.Load.Value("fun")
		}
		return out
	}
	if got := funs(); len(got) != 2 || c.loads.size() != 2 {
		t.Fatalf("first get_jids = %v, %d kept", got, c.loads.size())
	}
	if err := c.SaveLoad(ctx, jids[0], ordered.FromPairs("fun", "test.echo", "jid", jids[0]), nil); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(c.JIDDir(jids[1])); err != nil {
		t.Fatal(err)
	}
	added := "20261201020304000003"
	if err := c.SaveLoad(ctx, added, ordered.FromPairs("fun", "test.arg", "jid", added), nil); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{jids[0]: "test.echo", added: "test.arg"}
	if diff := cmp.Diff(want, funs()); diff != "" {
		t.Errorf("get_jids after the changes (-want +got):\n%s", diff)
	}
}
