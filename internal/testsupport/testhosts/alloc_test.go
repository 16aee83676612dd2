package testhosts

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCleanupStale simulates the leftovers of crashed runs and checks that
// Cleanup removes them while leaving a live cluster alone.
func TestCleanupStale(t *testing.T) {
	RequireNetns(t, "stale network objects exist only with root")
	ctx := t.Context()
	live := New(t, 1)
	crashed, err := Start(ctx, Config{N: 2})
	if err != nil {
		t.Fatal(err)
	}
	detachedDir := t.TempDir()
	detached, err := Start(ctx, Config{N: 1, Detach: true, Dir: detachedDir})
	if err != nil {
		t.Fatal(err)
	}
	var procs []procRef
	for _, c := range []*Cluster{crashed, detached} {
		for _, h := range c.st.Hosts {
			procs = append(procs, hostProcs(h.Dir, true)...)
		}
	}
	// The owner of "crashed" died (a pid beyond pid_max never runs), and
	// somebody deleted the detached cluster's directory instead of `down`.
	if err := writeJSON(ownerFile(crashed.st.WorkDir), owner{Owner: procRef{Pid: 1 << 23, Start: 1}}, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(detachedDir, "state.json")); err != nil {
		t.Fatal(err)
	}
	// A namespace of a cluster that has no work directory at all.
	orphan := 0
	for c := maxClusters; c > 0 && orphan == 0; c-- {
		if _, err := os.Stat(workDirOf(c)); errors.Is(err, fs.ErrNotExist) && !linksOf(c) && len(clusterNetns(c)) == 0 {
			orphan = c
		}
	}
	if err := ipCmd(ctx, "netns", "add", netnsName(orphan, 1)); err != nil {
		t.Fatal(err)
	}

	if err := Cleanup(ctx); err != nil {
		t.Fatal(err)
	}

	for _, c := range []*Cluster{crashed, detached} {
		if _, err := os.Stat(c.st.WorkDir); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("cluster %d: work dir still there (%v)", c.st.Cluster, err)
		}
		if ns := clusterNetns(c.st.Cluster); len(ns) > 0 {
			t.Errorf("cluster %d: namespaces left: %v", c.st.Cluster, ns)
		}
	}
	if ns := clusterNetns(orphan); len(ns) > 0 {
		t.Errorf("orphan namespaces left: %v", ns)
	}
	for _, p := range procs {
		if p.alive() {
			t.Errorf("process %d still alive", p.Pid)
		}
	}
	if _, err := os.Stat(live.st.WorkDir); err != nil {
		t.Errorf("live cluster removed: %v", err)
	}
	if out, err := live.Exec(ctx, "host1", "hostname"); err != nil || string(out) != "host1\n" {
		t.Errorf("live cluster broken: %q, %v", out, err)
	}
	for _, c := range []*Cluster{crashed, detached} {
		if err := c.Close(ctx); err != nil {
			t.Errorf("Close after Cleanup: %v", err)
		}
	}
}

// TestUnavailable: New skips (or, under BRINE_REQUIRE_HOSTS=1, fails) a
// cluster the machine cannot give, judged from its Config.
func TestUnavailable(t *testing.T) {
	t.Setenv(SSHDEnv, "")
	netns := netnsUnavailable()
	root := os.Geteuid() == 0
	for _, tc := range []struct {
		name   string
		cfg    Config
		strict bool
		want   bool // unavailable
	}{
		{"loopback", Config{N: 1, Mode: ModeLoopback}, true, false},
		{"auto", Config{N: 1}, false, false},
		{"auto strict", Config{N: 1}, true, netns != ""},
		{"netns", Config{N: 1, Mode: ModeNetns}, false, netns != ""},
		{"behind", Config{N: 2, Hosts: map[string]HostOptions{"host2": {BehindHost: "host1"}}}, false, netns != ""},
		{"root options", Config{N: 1, Mode: ModeLoopback, Defaults: HostOptions{NoPython: true}}, false, !root},
	} {
		if _, err := findSSHD(); err != nil {
			t.Fatal(err)
		}
		if got := unavailable(tc.cfg, tc.strict); (got != "") != tc.want {
			t.Errorf("%s: unavailable = %q, want unavailable=%v", tc.name, got, tc.want)
		}
	}
	t.Setenv(SSHDEnv, "/nonexistent/sshd")
	if got := unavailable(Config{N: 1, Mode: ModeLoopback}, false); !strings.Contains(got, "no sshd") {
		t.Errorf("without sshd: %q", got)
	}
}
