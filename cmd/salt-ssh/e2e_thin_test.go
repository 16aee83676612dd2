package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/testsupport/testhosts"
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

// TestE2EFullThinDirNamed: a cold host whose thin_dir's file system has
// no room for the thin gets "no space left on <host>:<thin_dir>", not
// SFTP's bare "Failure": refused before the upload for a user login, and
// explained after the failed upload for a root login (whose df figure
// leaves out the blocks kept for root). Both thin_dirs are a 1 MiB tmpfs
// mounted inside the host's own mount namespace.
func TestE2EFullThinDirNamed(t *testing.T) {
	c := testhosts.New(t, 2)
	e := newEnv(t, c, true)
	var roster strings.Builder
	for _, h := range c.Hosts() {
		user := c.User()
		if h.ID == "host2" {
			user = "root"
		}
		fmt.Fprintf(&roster, "%s:\n  host: %s\n  port: %d\n  user: %s\n  priv: %s\n  thin_dir: /var/tmp/small/thin\n", h.ID, h.IP, h.Port, user, c.KeyPath())
	}
	e.useRoster(roster.String())
	ctx := context.Background()
	for id, owner := range map[string]string{"host1": c.User(), "host2": "root"} {
		script := fmt.Sprintf("mkdir -p /var/tmp/small && mount -t tmpfs -o size=1m,mode=0755 brine-small /var/tmp/small && install -d -o %[1]s -g $(id -g %[1]s) -m 700 /var/tmp/small/thin", owner)
		if out, err := c.Exec(ctx, id, script); err != nil {
			t.Fatalf("mount a small thin_dir on %s: %v %s", id, err, out)
		}
	}
	got, code, stderr := e.saltSSH("*", "test.ping")
	if code == 0 || len(got) != 2 {
		t.Fatalf("code %d, %v\n%s", code, got, stderr)
	}
	for _, id := range []string{"host1", "host2"} {
		s, _ := got[id].(string)
		if want := "no space left on " + id + ":/var/tmp/small/thin ("; !strings.Contains(s, want) {
			t.Errorf("%s: %v, want it to say %q", id, got[id], want)
		}
		out, err := c.Exec(ctx, id, "ls -A /var/tmp/small/thin")
		if err != nil || strings.TrimSpace(string(out)) != "" {
			t.Errorf("%s: thin_dir holds %q after the failed deploy (%v)", id, out, err)
		}
	}
}
