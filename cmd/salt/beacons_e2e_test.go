package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/testsupport/clustertest"
)

// TestBeaconsEndToEnd runs a real master and minion: an inotify beacon
// on a file fires salt/beacon/<id>/inotify/<path> on the master's bus
// (seen with salt-run state.event) with Salt's data; a beacon whose
// configuration is wrong is reported once in the minion log while the
// others run; beacons.list and beacons.add work over salt.
func TestBeaconsEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemons")
	}
	c := clustertest.New(t, "auto_accept: True\n")
	watched := filepath.Join(c.Dir, "watched.conf")
	os.WriteFile(watched, []byte("v1\n"), 0o600)
	dir := c.MinionConf("b1", "b1", `beacons:
  inotify:
    - files:
        `+watched+`:
          mask: [modify]
    - disable_during_state_run: True
  diskusage:
    - '^\/(?!home).*$': 90%
`)
	c.StartMinion("b1", dir)
	c.PingUntil("b1", "b1")

	t.Run("inotify event on the master bus", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
		defer cancel()
		ev := exec.CommandContext(ctx, filepath.Join(c.Bin, "salt-run"), "-c", filepath.Join(c.Dir, "master"),
			"state.event", "tagmatch=salt/beacon/b1/inotify/*", "count=1")
		var out clustertest.SyncBuffer
		ev.Stdout = &out
		if err := ev.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- ev.Wait() }()
		tick := time.NewTicker(300 * time.Millisecond)
		defer tick.Stop()
	wait:
		for {
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("state.event: %v\n%s", err, out.String())
				}
				break wait
			case <-tick.C:
				// Written until the event comes: the beacon watches the
				// file from its first pass on.
				os.WriteFile(watched, []byte("edited\n"), 0o600)
			}
		}
		tag, body, ok := strings.Cut(strings.TrimSpace(out.String()), "\t")
		if !ok || tag != "salt/beacon/b1/inotify/"+watched {
			t.Fatalf("event: %q", out.String())
		}
		var data map[string]any
		if err := json.Unmarshal([]byte(body), &data); err != nil {
			t.Fatalf("event data %q: %v", body, err)
		}
		if data["path"] != watched || data["change"] != "IN_MODIFY" || data["id"] != "b1" || data["_stamp"] == nil {
			t.Fatalf("event data %v", data)
		}
	})
	t.Run("bad beacon reported once", func(t *testing.T) {
		if n := strings.Count(c.Logs["b1"].String(), "Beacon diskusage configuration invalid, not running."); n != 1 {
			t.Fatalf("reported %d times:\n%s", n, c.Logs["b1"].String())
		}
	})
	t.Run("beacons module", func(t *testing.T) {
		out, _ := c.Run("salt", "b1", "beacons.list")
		if !strings.Contains(out, "inotify:") || !strings.Contains(out, watched) {
			t.Fatalf("beacons.list: %s", out)
		}
		out, _ = c.Run("salt", "b1", "beacons.add", "memusage", "[{percent: 200%}]")
		if !strings.Contains(out, "Added beacon: memusage.") {
			t.Fatalf("beacons.add: %s", out)
		}
		out, _ = c.Run("salt", "b1", "beacons.list", "return_yaml=False", "--out", "json")
		if !strings.Contains(out, `"memusage"`) {
			t.Fatalf("beacons.list after add: %s", out)
		}
	})
}
