package master

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
)

// TestMasterSchedule runs a master whose `schedule:` names runners:
// each run fires __schedule_return on the bus with the minion-style
// load, the runner's return in it; a runner the master lacks returns
// Salt's missing-function text with success false.
func TestMasterSchedule(t *testing.T) {
	o := testOptions(t.TempDir())
	o.Raw = ordered.FromPairs("id", "mymaster", "schedule", ordered.FromPairs(
		"up", ordered.FromPairs("function", "manage.up", "seconds", 1, "kwargs", ordered.FromPairs("show_ip", false)),
		"missing", ordered.FromPairs("function", "nosuch.fun", "seconds", 1)))
	m, err := New(o, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ch, unsub := m.Bus().Subscribe()
	defer unsub()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if err := m.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer m.Stop()
	got := map[string]*ordered.Map{}
	for len(got) < 2 {
		select {
		case <-ctx.Done():
			t.Fatalf("schedule returns seen: %v", got)
		case ev := <-ch:
			if ev.Tag == "__schedule_return" {
				got[ev.Data.Value("schedule").(string)] = ev.Data
			}
		}
	}
	up := got["up"]
	if up.Value("cmd") != "_return" || up.Value("id") != "mymaster" || up.Value("fun") != "manage.up" || up.Value("jid") != "req" || up.Value("success") != true {
		t.Fatalf("up: %v", up)
	}
	if l, ok := up.Value("return").([]any); !ok || len(l) != 0 {
		t.Fatalf("manage.up returned %v", up.Value("return"))
	}
	if miss := got["missing"]; miss.Value("return") != "'nosuch.fun' is not available." || miss.Value("success") != false || miss.Value("retcode") != 254 {
		t.Fatalf("missing: %v", miss)
	}
}
