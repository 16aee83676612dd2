package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/testsupport/clustertest"
)

// TestE2ESelfHealing is Salt's canonical self-healing demo: an inotify
// beacon watches a managed file, its salt/beacon/<id>/inotify/<path>
// event reaches the master's reactor, and the reaction applies the state
// that manages the file, so an edit by hand is reverted. The beacon is
// off during state runs (disable_during_state_run), so the state's own
// write does not start the loop again.
func TestE2ESelfHealing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a master and a minion")
	}
	c := clustertest.New(t, `auto_accept: True
reactor:
  - 'salt/beacon/*/inotify/*':
    - salt://reactor/heal.sls
`)
	watched := filepath.Join(c.Dir, "motd")
	writeTree(t, filepath.Join(c.Dir, "srv/salt"), map[string]string{
		"reactor/heal.sls": `revert_{{ data['id'] }}:
  local.state.apply:
    - tgt: {{ data['id'] }}
    - args:
      - mods: motd
`,
		"motd.sls": watched + ":\n  file.managed:\n    - contents: managed by salt\n",
	})
	dir := c.MinionConf("heal1", "heal1", `beacons:
  inotify:
    - files:
        `+watched+`:
          mask: [modify]
    - disable_during_state_run: True
`)
	c.StartMinion("heal1", dir)
	c.PingUntil("heal1", "heal1")
	if out, code := c.Run("salt", "heal1", "state.apply", "motd"); code != 0 {
		t.Fatalf("state.apply motd: exit %d\n%s", code, out)
	}
	managed := func() bool {
		b, err := os.ReadFile(watched)
		return err == nil && strings.TrimSpace(string(b)) == "managed by salt"
	}
	if !managed() {
		t.Fatal("state.apply did not write the file")
	}
	// Edit by hand until the reactor has put it back: the first edit may
	// come before the beacon's first pass has set up its watch.
	var edited time.Time
	c.WaitFor("the reactor to revert the edit", func() bool {
		if !edited.IsZero() && managed() {
			return true
		}
		if time.Since(edited) > 5*time.Second {
			if err := os.WriteFile(watched, []byte("edited by hand\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			edited = time.Now()
		}
		return false
	})
	if log := c.Logs["master"].String(); strings.Contains(log, "Failed to render") {
		t.Errorf("master log:\n%s", log)
	}
}
