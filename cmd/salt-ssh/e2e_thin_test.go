package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/testhosts"
)

// TestE2EStaleUploadsCleared: the partial uploads a killed salt-ssh
// leaves in thin_dir go with the next cold run, while a fresh one (a
// concurrent run's upload in flight) stays.
func TestE2EStaleUploadsCleared(t *testing.T) {
	c := testhosts.New(t, 1)
	e := newEnv(t, c, true)
	if got, code, stderr := e.saltSSH("*", "test.ping"); code != 0 || got["host1"] != true {
		t.Fatalf("first run: code %d, %v\n%s", code, got, stderr)
	}
	ctx := context.Background()
	old := time.Now().Add(-time.Hour).Unix()
	stale := []string{".salt-thin-0ld.up-1764620000000000000.zst.tmp-0123456789ab", "salt-thin-0ld.up-1764620000000000001.zst"}
	fresh := ".salt-thin-0ld.up-1764620000000000002.zst.tmp-fedcba987654"
	// Make the host cold again, as after a kill during the upload.
	script := fmt.Sprintf("cd /var/tmp/.brine_*_salt && rm -f salt-thin-* && for f in %s %s; do head -c 100000 /dev/zero > $f; done && touch -d @%d %s && chown %s: .salt-thin-* salt-thin-*",
		strings.Join(stale, " "), fresh, old, strings.Join(stale, " "), c.User())
	if out, err := c.Exec(ctx, "host1", script); err != nil {
		t.Fatalf("plant uploads: %v %s", err, out)
	}
	got, code, stderr := e.saltSSH("*", "test.ping")
	if code != 0 || got["host1"] != true {
		t.Fatalf("cold run: code %d, %v\n%s", code, got, stderr)
	}
	out, err := c.Exec(ctx, "host1", "ls -A /var/tmp/.brine_*_salt/")
	if err != nil {
		t.Fatal(err)
	}
	left := strings.Fields(string(out))
	for _, f := range stale {
		if slices.Contains(left, f) {
			t.Errorf("stale upload %s survived the cold run: %v", f, left)
		}
	}
	bins := slices.DeleteFunc(slices.Clone(left), func(f string) bool { return !strings.HasPrefix(f, "salt-thin-") || strings.Contains(f, ".") })
	if len(bins) != 1 {
		t.Errorf("thin_dir holds binaries %v after the cold run, want the one sent", bins)
	}
	if !slices.Contains(left, fresh) {
		t.Errorf("a fresh upload (a concurrent run's) was removed: %v", left)
	}
}
