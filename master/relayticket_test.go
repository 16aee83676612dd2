package master

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
)

// TestRelayTicketStaysInThePublication: the relay ticket of salt-cp
// --relay holds the run's key; the master publishes it but keeps it out
// of the job cache and off the event bus.
func TestRelayTicketStaysInThePublication(t *testing.T) {
	m, ctx := startMaster(t)
	ch, cancel := m.Bus().Subscribe()
	defer cancel()
	const secret = "5ec12e75ec12e75ec12e75ec12e75ec12e75ec12e75ec12e75ec12e75ec12e7"
	jid, _, err := m.Publish(ctx, PublishRequest{Tgt: "*", Fun: "cp.recv_relay", Arg: []any{ordered.New()},
		Relay: ordered.FromPairs("port", 4510, "key", secret)})
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	timeout := time.After(2 * time.Second)
	for done := false; !done; {
		select {
		case ev := <-ch:
			seen++
			if s := fmt.Sprint(ev.Tag, ev.Data); bytes.Contains([]byte(s), []byte(secret)) {
				t.Errorf("event %s carries the key", ev.Tag)
			}
		case <-timeout:
			done = true
		}
	}
	if seen == 0 {
		t.Fatal("no events for the job")
	}
	found := false
	filepath.WalkDir(m.o.CacheDir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		b, _ := os.ReadFile(p)
		if bytes.Contains(b, []byte(jid)) || bytes.Contains(b, []byte("cp.recv_relay")) {
			found = true
		}
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("%s holds the key", p)
		}
		return nil
	})
	if !found {
		t.Error("the job's load is not in the job cache: nothing was checked")
	}
}
