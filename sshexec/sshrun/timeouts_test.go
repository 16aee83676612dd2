package sshrun

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/config"
	"github.com/brinesalt/brine/roster"
)

// TestConnectionDefaults pins what a run uses when nothing is configured
// (a 30 s connect timeout, a keepalive every 15 s, lost after 3 misses:
// a cut link ends the host's run within 60 s) and that Salt's options
// still decide when set.
func TestConnectionDefaults(t *testing.T) {
	cases := []struct {
		name, master string
		s            Settings
		want         []any // connect timeout, ServerAliveInterval, ServerAliveCountMax
	}{
		{"defaults", "", Settings{}, []any{30 * time.Second, 15 * time.Second, 3}},
		{"ssh_timeout as Salt sums it", "ssh_timeout: 60\n", Settings{}, []any{65 * time.Second, 15 * time.Second, 3}},
		{"timeout as Salt sums it", "timeout: 10\n", Settings{}, []any{70 * time.Second, 15 * time.Second, 3}},
		{"--timeout", "ssh_timeout: 60\n", Settings{Timeout: 7}, []any{7 * time.Second, 15 * time.Second, 3}},
		{"ssh_keepalive_*", "ssh_keepalive_interval: 5\nssh_keepalive_count_max: 2\n", Settings{}, []any{30 * time.Second, 5 * time.Second, 2}},
		{"ssh_keepalive off", "ssh_keepalive: false\n", Settings{}, []any{30 * time.Second, time.Duration(0), 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "master"), []byte(c.master), 0o600); err != nil {
				t.Fatal(err)
			}
			cfg, err := config.LoadMaster(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			c.s.Set = map[string]bool{}
			sr := &Run{s: c.s, cfg: cfg, log: slog.New(slog.DiscardHandler)}
			ro := sr.rosterOptions()
			d, _, _ := testDialer(t, "")
			tg, _ := roster.ParseFlat(t.Context(), []byte("h: 10.0.0.1\n"), "roster", roster.Config{Options: ro})
			sc, err := d.config(&tg.Entries[0].Target)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, []any{sc.Timeout, sc.ServerAliveInterval, sc.ServerAliveCountMax}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
