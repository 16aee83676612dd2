package jobcache

import (
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
	jid := "20261201020304123456"
	if err := c.SaveReturn(&protocol.Return{ID: "m1", JID: jid}); !errors.Is(err, ErrUnknownJob) {
		t.Fatalf("return before load: %v", err)
	}
	load := ordered.FromPairs("fun", "test.ping", "arg", []any{}, "tgt", "*", "jid", jid)
	if err := c.SaveLoad(jid, load, []string{"m1", "m2"}); err != nil {
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
	if err := c.SaveReturn(&protocol.Return{ID: "m1", JID: jid, Return: true, Success: true, Out: "nested"}); err != nil {
		t.Fatal(err)
	}
	if err := c.SaveReturn(&protocol.Return{ID: "m1", JID: jid, Return: false}); !errors.Is(err, ErrDuplicate) {
		t.Fatalf("duplicate: %v", err)
	}
	rets, err := c.Returns(jid)
	if err != nil || len(rets) != 1 || rets["m1"].Return != true || rets["m1"].Out != "nested" || !rets["m1"].Success {
		t.Fatalf("returns = %+v, %v", rets, err)
	}
	if got := c.Minions(jid); len(got) != 2 {
		t.Fatalf("minions = %v", got)
	}
	if l, err := c.Load(jid); err != nil || l.Value("fun") != "test.ping" {
		t.Fatalf("load = %v, %v", l, err)
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
