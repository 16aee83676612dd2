package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/testsupport/clustertest"
	"github.com/brinesalt/brine/internal/testsupport/testhosts"
)

// relayStats is salt-cp --relay's closing log line.
var relayStats = regexp.MustCompile(`relay: controller sent (\d+) chunks \((\d+) bytes\), minions (\d+) chunks to each other, (\d+) corrupt`)

// TestE2ERelay runs a real master and five salt-minion processes, each
// in its own mount namespace with a private tmpfs at the destination,
// and copies with salt-cp --relay: the minions fetch the chunks from
// each other over the relay's peer protocol, salt-cp sends each chunk
// once, every minion ends with the whole file and its relay store
// empty. Then a minion is killed mid-transfer: the others finish, it
// leaves no file under a final name, and once restarted a rerun brings
// it the file.
func TestE2ERelay(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemons")
	}
	testhosts.RequireRoot(t, "a private mount per minion")
	c := clustertest.New(t, "auto_accept: True\n", "salt-cp")
	dest := filepath.Join(c.Dir, "dest")
	if err := os.Mkdir(dest, 0o755); err != nil {
		t.Fatal(err)
	}
	ids := []string{"m1", "m2", "m3", "m4", "m5"}
	start := func(id string) {
		c.StartMinionWrapped(id, c.MinionConf(id, id, ""), "unshare", "-m", "--propagation", "private",
			"sh", "-c", "mount -t tmpfs tmpfs "+dest+` && exec "$0" "$@"`)
	}
	for _, id := range ids {
		start(id)
	}
	c.PingUntil("*", ids...)
	src := t.TempDir()
	sum := randomFile(t, filepath.Join(src, "release.bin"), 6<<20+4321)

	t.Run("each chunk leaves salt-cp once", func(t *testing.T) {
		out, code := c.Run("salt-cp", "--relay", "-l", "info", "*", filepath.Join(src, "release.bin"), dest+"/release.bin", "--out", "json")
		res := clustertest.JSONDocs(t, jsonPart(out))
		if code != 0 || len(res) != 1 {
			t.Fatalf("salt-cp: %d\n%s", code, out)
		}
		for _, id := range ids {
			if d := cmp.Diff(map[string]any{dest + "/release.bin": true}, res[0][id]); d != "" {
				t.Errorf("%s: %s", id, d)
			}
		}
		m := relayStats.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no relay stats in\n%s", out)
		}
		if m[1] != "7" || m[3] != "28" || m[4] != "0" {
			t.Errorf("want 7 chunks from salt-cp and 28 between minions: %s", m[0])
		}
		hashes := remoteHashes(t, c, dest+"/release.bin")
		for _, id := range ids {
			if hashes[id] != sum {
				t.Errorf("%s has %q, want %s", id, hashes[id], sum)
			}
			if left := storeFiles(t, c, id); len(left) > 0 {
				t.Errorf("%s: relay store keeps %v", id, left)
			}
		}
	})

	t.Run("a minion killed mid-transfer", func(t *testing.T) {
		big := randomFile(t, filepath.Join(src, "big.bin"), 96<<20)
		victim := c.Minions["m5"]
		killed := make(chan bool, 1)
		go func() {
			// Kill m5 as soon as it holds a verified chunk, not yet the file.
			chunks := filepath.Join(c.Dir, "minion-m5", "cache", "relay", ".chunks")
			deadline := time.Now().Add(60 * time.Second)
			for time.Now().Before(deadline) {
				if ents, _ := os.ReadDir(chunks); len(ents) > 0 {
					victim.Process.Signal(syscall.SIGKILL)
					killed <- true
					return
				}
				time.Sleep(time.Millisecond)
			}
			killed <- false
		}()
		out, code := c.Run("salt-cp", "--relay", "-l", "info", "*", filepath.Join(src, "big.bin"), dest+"/big.bin", "--out", "json")
		if !<-killed {
			t.Fatalf("m5 never started receiving:\n%s", out)
		}
		victim.Wait()
		delete(c.Minions, "m5")
		res := clustertest.JSONDocs(t, jsonPart(out))
		if code != 0 || len(res) != 1 {
			t.Fatalf("salt-cp: %d\n%s", code, out)
		}
		for _, id := range ids[:4] {
			if d := cmp.Diff(map[string]any{dest + "/big.bin": true}, res[0][id]); d != "" {
				t.Errorf("%s: %s", id, d)
			}
		}
		if v, ok := res[0]["m5"]; ok && cmp.Diff(map[string]any{dest + "/big.bin": true}, v) != "" {
			t.Errorf("m5: %v", v)
		}
		if _, err := os.Stat(filepath.Join(c.Dir, "minion-m5", "cache", "relay", big)); err == nil {
			t.Errorf("m5 has the file under its final name in its store after being killed")
		}
		hashes := remoteHashes(t, c, dest+"/big.bin")
		for _, id := range ids[:4] {
			if hashes[id] != big {
				t.Errorf("%s has %q, want %s", id, hashes[id], big)
			}
		}
		start("m5")
		c.PingUntil("m5", "m5")
		out, code = c.Run("salt-cp", "--relay", "-l", "info", "m5", filepath.Join(src, "big.bin"), dest+"/big.bin", "--out", "json")
		res = clustertest.JSONDocs(t, jsonPart(out))
		if code != 0 || len(res) != 1 || cmp.Diff(map[string]any{dest + "/big.bin": true}, res[0]["m5"]) != "" {
			t.Fatalf("rerun to m5: %d\n%s", code, out)
		}
		if h := remoteHashes(t, c, dest+"/big.bin"); h["m5"] != big {
			t.Errorf("m5 has %q after the rerun", h["m5"])
		}
	})
}

// jsonPart drops the log lines salt-cp -l info writes before and after
// the document.
func jsonPart(out string) string {
	var keep []string
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, "[") && !strings.HasPrefix(l, "time=") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// storeFiles lists what a minion's relay store holds besides its
// directory of chunks.
func storeFiles(t *testing.T, c *clustertest.Cluster, id string) []string {
	t.Helper()
	dir := filepath.Join(c.Dir, "minion-"+id, "cache", "relay")
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			out = append(out, strings.TrimPrefix(p, dir+"/"))
		}
		return nil
	})
	return out
}
