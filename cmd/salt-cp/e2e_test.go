package main

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/testsupport/clustertest"
	"github.com/brinesalt/brine/internal/testsupport/testhosts"
)

// The end-to-end test runs a real master and three salt-minion
// processes, each in its own mount namespace with a private tmpfs at
// the destination directory, so every minion has its own copy of the
// destination at the same path; m3's tmpfs is read-only.
func TestEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the daemons")
	}
	testhosts.RequireRoot(t, "a private mount per minion")
	c := clustertest.New(t, "auto_accept: True\nsalt_cp_chunk_size: 262144\n", "salt-cp")
	dest := filepath.Join(c.Dir, "dest")
	if err := os.Mkdir(dest, 0o755); err != nil {
		t.Fatal(err)
	}
	for id, ro := range map[string]string{"m1": "", "m2": "", "m3": "-o ro "} {
		c.StartMinionWrapped(id, c.MinionConf(id, id, ""), "unshare", "-m", "--propagation", "private",
			"sh", "-c", "mount -t tmpfs "+ro+"tmpfs "+dest+` && exec "$0" "$@"`)
	}
	c.PingUntil("*", "m1", "m2", "m3")
	src := t.TempDir()
	big := randomFile(t, filepath.Join(src, "big.bin"), 3<<20+12345)
	small := []byte("small text file\n")
	os.WriteFile(filepath.Join(src, "small.txt"), small, 0o640)
	tree := filepath.Join(src, "tree")
	os.MkdirAll(filepath.Join(tree, "sub"), 0o755)
	os.MkdirAll(filepath.Join(tree, "empty"), 0o755)
	a := randomFile(t, filepath.Join(tree, "a.bin"), 300000)
	b := randomFile(t, filepath.Join(tree, "sub", "b.bin"), 10)

	t.Run("chunked big file, one unwritable minion", func(t *testing.T) {
		out, code := c.Run("salt-cp", "-C", "*", filepath.Join(src, "big.bin"), dest+"/big.bin", "--out", "json")
		res := clustertest.JSONDocs(t, out)
		if code != 0 || len(res) != 1 {
			t.Fatalf("salt-cp: %d\n%s", code, out)
		}
		r := res[0]
		for _, id := range []string{"m1", "m2"} {
			if d := cmp.Diff(map[string]any{dest + "/big.bin": true}, r[id]); d != "" {
				t.Errorf("%s: %s", id, d)
			}
		}
		m3, _ := r["m3"].(map[string]any)
		if msg, _ := m3[dest+"/big.bin"].(string); !strings.Contains(msg, "Read-only file system") {
			t.Errorf("m3: %v", r["m3"])
		}
		hashes := remoteHashes(t, c, dest+"/big.bin")
		for _, id := range []string{"m1", "m2"} {
			if hashes[id] != big {
				t.Errorf("%s has sha256 %q, want %s", id, hashes[id], big)
			}
		}
		if strings.Contains(hashes["m3"], "  ") {
			t.Errorf("m3 has the file: %q", hashes["m3"])
		}
		out, _ = c.Run("salt", "*", "cmd.run", "ls -A "+dest)
		if strings.Contains(out, "salt-cp-") {
			t.Errorf("staging files left:\n%s", out)
		}
	})

	t.Run("directories recursively, no compression", func(t *testing.T) {
		out, code := c.Run("salt-cp", "-C", "-n", "-L", "m1,m2", tree, filepath.Join(src, "small.txt"), dest+"/", "--out", "json")
		res := clustertest.JSONDocs(t, out)
		want := map[string]any{dest + "/tree/a.bin": true, dest + "/tree/sub/b.bin": true, dest + "/tree/empty": true, dest + "/small.txt": true}
		if code != 0 || len(res) != 1 {
			t.Fatalf("salt-cp: %d\n%s", code, out)
		}
		for _, id := range []string{"m1", "m2"} {
			if d := cmp.Diff(want, res[0][id]); d != "" {
				t.Errorf("%s: %s", id, d)
			}
			hashes := remoteHashes(t, c, dest+"/tree/a.bin", dest+"/tree/sub/b.bin")
			if hashes[id] != a+"\n"+b {
				t.Errorf("%s hashes %q", id, hashes[id])
			}
		}
		out, _ = c.Run("salt", "m1", "cmd.run", "test -d "+dest+"/tree/empty && stat -c %a "+dest+"/small.txt")
		if !strings.Contains(out, "640") {
			t.Errorf("empty dir or mode not kept:\n%s", out)
		}
	})

	t.Run("non-chunked", func(t *testing.T) {
		out, code := c.Run("salt-cp", "*", filepath.Join(src, "small.txt"), dest+"/plain.txt")
		if code != 0 || !strings.Contains(out, "m1:\n    ----------\n    "+dest+"/plain.txt:\n        True") ||
			!strings.Contains(out, "m3:\n    ----------\n    "+dest+"/plain.txt:\n        False") {
			t.Fatalf("salt-cp: %d\n%s", code, out)
		}
		out, _ = c.Run("salt", "m2", "cmd.run", "cat "+dest+"/plain.txt")
		if !strings.Contains(out, "small text file") {
			t.Errorf("content on m2:\n%s", out)
		}
		out, code = c.Run("salt-cp", "*", tree, dest)
		if code != 1 || !strings.Contains(out, "is a directory, only files are supported") {
			t.Errorf("directory without -C: %d\n%s", code, out)
		}
	})

	t.Run("a stopped minion costs one timeout", func(t *testing.T) {
		m2 := c.Minions["m2"]
		m2.Process.Signal(os.Interrupt)
		m2.Wait()
		delete(c.Minions, "m2")
		out, code := c.Run("salt-cp", "-C", "*", filepath.Join(src, "big.bin"), dest+"/again.bin", "--out", "json")
		res := clustertest.JSONDocs(t, out)
		if code != 0 || len(res) != 1 {
			t.Fatalf("salt-cp: %d\n%s", code, out)
		}
		if d := cmp.Diff(map[string]any{dest + "/again.bin": true}, res[0]["m1"]); d != "" {
			t.Errorf("m1: %s", d)
		}
		if _, ok := res[0]["m2"]; ok {
			t.Errorf("the stopped minion has a result: %v", res[0]["m2"])
		}
		if hashes := remoteHashes(t, c, dest+"/again.bin"); hashes["m1"] != big {
			t.Errorf("m1 hash %q", hashes["m1"])
		}
	})

	t.Run("usage errors", func(t *testing.T) {
		out, code := c.Run("salt-cp", "-C", "*", filepath.Join(src, "nope"), dest)
		if code != 42 || !strings.Contains(out, "nope does not exist") {
			t.Errorf("missing source: %d\n%s", code, out)
		}
		if out, code := c.Run("salt-cp", "*", dest); code != 2 || !strings.Contains(out, "Insufficient arguments") {
			t.Errorf("too few arguments: %d\n%s", code, out)
		}
	})
}

func randomFile(t *testing.T, path string, n int) string {
	t.Helper()
	b := make([]byte, n)
	rand.Read(b)
	// Half text, so gzip has something to do.
	copy(b[n/2:], bytes.Repeat([]byte("brine "), n/12))
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// remoteHashes asks each minion for the SHA-256 of paths (one per
// line), read on the minion's side of its private mount.
func remoteHashes(t *testing.T, c *clustertest.Cluster, paths ...string) map[string]string {
	t.Helper()
	// salt reports failed minions on stderr, so the documents are read
	// from --out-file.
	file := filepath.Join(t.TempDir(), "hashes.json")
	c.Run("salt", "*", "cmd.run", "sha256sum "+strings.Join(paths, " ")+" | cut -d' ' -f1", "--out", "json", "--out-file", file)
	out, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, d := range clustertest.JSONDocs(t, string(out)) {
		for id, v := range d {
			got[id], _ = v.(string)
		}
	}
	return got
}
