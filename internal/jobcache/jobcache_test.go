package jobcache

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

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
