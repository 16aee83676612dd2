package minion_test

import (
	"context"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/master"
	"github.com/brinesalt/brine/minion"
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
