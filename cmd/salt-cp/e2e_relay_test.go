package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/relay"
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
		if n := distinctChunks(t, filepath.Join(src, "release.bin")); m[1] != fmt.Sprint(n) || m[3] != fmt.Sprint(4*n) || m[4] != "0" {
			t.Errorf("want each distinct chunk once from salt-cp and four times between minions: %s", m[0])
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
				if holdsData(chunks) {
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
		kept := verifiedChunks(t, filepath.Join(c.Dir, "minion-m5", "cache", "relay", ".chunks"), filepath.Join(src, "big.bin"))
		start("m5")
		c.PingUntil("m5", "m5")
		out, code = c.Run("salt-cp", "--relay", "-l", "info", "m5", filepath.Join(src, "big.bin"), dest+"/big.bin", "--out", "json")
		res = clustertest.JSONDocs(t, jsonPart(out))
		if code != 0 || len(res) != 1 || cmp.Diff(map[string]any{dest + "/big.bin": true}, res[0]["m5"]) != "" {
			t.Fatalf("rerun to m5: %d\n%s", code, out)
		}
		// Alone in the rerun, m5 gets from salt-cp only what it had not
		// verified before it was killed.
		if m := relayStats.FindStringSubmatch(out); m == nil || m[1] != fmt.Sprint(distinctChunks(t, filepath.Join(src, "big.bin"))-kept) {
			t.Errorf("rerun after keeping %d verified chunks: %v", kept, m)
		}
		if h := remoteHashes(t, c, dest+"/big.bin"); h["m5"] != big {
			t.Errorf("m5 has %q after the rerun", h["m5"])
		}
	})
}

// distinctChunks is how many different 1 MiB chunks the file has: the
// relay moves each once (randomFile's text half repeats).
func distinctChunks(t *testing.T, path string) int {
	t.Helper()
	f, err := relay.Split(path, relay.DefaultChunkSize)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, c := range f.Chunks {
		seen[c] = true
	}
	return len(seen)
}

// holdsData says whether a relay store's .chunks directory holds any
// chunk data yet: a chunk file, or a part file with blocks allocated (a
// region not written yet is a hole).
func holdsData(dir string) bool {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".relay-") {
			continue
		}
		var st syscall.Stat_t
		if syscall.Stat(filepath.Join(dir, e.Name()), &st) == nil && st.Blocks > 0 {
			return true
		}
	}
	return false
}

// verifiedChunks counts the distinct chunks of src a relay store's .chunks
// directory holds: chunk files, and the chunk-sized regions of its part
// files (internal/relay/store.go) whose sha256 is one of src's chunks.
func verifiedChunks(t *testing.T, dir, src string) int {
	t.Helper()
	f, err := relay.Split(src, relay.DefaultChunkSize)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, c := range f.Chunks {
		want[c] = true
	}
	held := map[string]bool{}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		name := e.Name()
		if !strings.HasSuffix(name, ".part") {
			if want[name] {
				held[name] = true
			}
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		for off := 0; off < len(b); off += relay.DefaultChunkSize {
			sum := sha256.Sum256(b[off:min(off+relay.DefaultChunkSize, len(b))])
			if h := hex.EncodeToString(sum[:]); want[h] {
				held[h] = true
			}
		}
	}
	return len(held)
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
