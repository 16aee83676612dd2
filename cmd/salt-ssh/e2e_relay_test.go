package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/testsupport/testhosts"
)

// relayDest is where the relay tests' SLS puts the release on each host.
const relayDest = "/var/tmp/release.bin"

// relayEnv is a controller with a salt:// release of mib MiB (1 MiB
// chunks) and release.sls managing it, logging the relay's figures.
func relayEnv(t *testing.T, c *testhosts.Cluster, mib int) (*env, string) {
	t.Helper()
	e := newEnv(t, c, true)
	srv := t.TempDir()
	data := make([]byte, mib<<20)
	rand.NewChaCha8([32]byte{'r', 'e', 'l', 'a', 'y'}).Read(data)
	writeTree(t, srv, map[string]string{
		"release.sls":       fmt.Sprintf("release:\n  file.managed:\n    - name: %s\n    - source: salt://release.bin\n", relayDest),
		"release.bin":       string(data),
		"tree.sls":          "tree:\n  file.recurse:\n    - name: /var/tmp/tree\n    - source: salt://tree\n",
		"tree/a.txt":        "small\n",
		"tree/sub/part.bin": string(data[:2<<20]),
	})
	e.writeMaster(fmt.Sprintf("file_roots:\n  base:\n    - %s\nlog_level_logfile: info\n", srv))
	sum := sha256.Sum256(data)
	return e, hex.EncodeToString(sum[:])
}

var controllerChunks = regexp.MustCompile(`relay: run done.*controller_chunks=(\d+)`)

// lastControllerChunks is what the last relay run in the log sent from
// the controller.
func lastControllerChunks(t *testing.T, e *env) int {
	t.Helper()
	b, _ := os.ReadFile(filepath.Join(e.dir, "ssh.log"))
	m := controllerChunks.FindAllSubmatch(b, -1)
	if len(m) == 0 {
		t.Fatalf("no relay summary in the log:\n%s", b)
	}
	n, _ := strconv.Atoi(string(m[len(m)-1][1]))
	return n
}

// hostSum is the sha256 of path on host id, "" when it is missing.
func hostSum(c *testhosts.Cluster, id, path string) string {
	out, err := c.Exec(context.Background(), id, "sha256sum "+path+" 2>/dev/null || true")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(out))
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// relayCache lists a host's content cache: whole files and chunk files.
func relayCache(t *testing.T, c *testhosts.Cluster, id string) (files, chunks []string) {
	t.Helper()
	out, err := c.Exec(context.Background(), id, "cd /var/tmp/.brine_*_salt/files 2>/dev/null && ls -A . && echo -- && ls -A .chunks 2>/dev/null; true")
	if err != nil {
		t.Fatal(err)
	}
	whole, parts, _ := strings.Cut(string(out), "--")
	for _, f := range strings.Fields(whole) {
		if f != ".chunks" {
			files = append(files, f)
		}
	}
	return files, strings.Fields(parts)
}

// zeroChunk is the sha256 of a 1 MiB hole in a part file: a chunk not
// written yet.
var zeroChunk = func() string {
	sum := sha256.Sum256(make([]byte, 1<<20))
	return hex.EncodeToString(sum[:])
}()

// verifiedChunks lists the chunks a host holds: chunk files, and the 1 MiB
// regions of its part files (internal/relay/store.go) that hold data
// (a region not written yet is a hole, which reads as zeros).
func verifiedChunks(t *testing.T, c *testhosts.Cluster, id string) []string {
	t.Helper()
	out, err := c.Exec(context.Background(), id, `cd /var/tmp/.brine_*_salt/files/.chunks 2>/dev/null || exit 0
for f in *; do case $f in
*.part) n=$(stat -c %s "$f"); i=0; while [ $((i*1048576)) -lt "$n" ]; do dd if="$f" bs=1M skip=$i count=1 status=none | sha256sum | cut -d' ' -f1; i=$((i+1)); done;;
.relay-*|'*') ;;
*) echo "$f";;
esac; done`)
	if err != nil {
		t.Fatal(err)
	}
	var held []string
	for _, h := range strings.Fields(string(out)) {
		if h != zeroChunk {
			held = append(held, h)
		}
	}
	return held
}

func checkApplied(t *testing.T, got map[string]any, ids ...string) {
	t.Helper()
	for _, id := range ids {
		states, _ := got[id].(map[string]any)
		if len(states) != 1 {
			t.Errorf("%s: %v", id, got[id])
		}
		for tag, v := range states {
			if r, _ := v.(map[string]any); r["result"] != true {
				t.Errorf("%s %s: %v", id, tag, r)
			}
		}
	}
}

// TestE2ERelayStateSLS: with --relay, a salt:// file.managed source
// reaches every host whole, the controller sends each chunk once, and
// no chunk files stay behind.
func TestE2ERelayStateSLS(t *testing.T) {
	c := testhosts.New(t, 6)
	e, sum := relayEnv(t, c, 6)
	got, code, stderr := e.saltSSH("--relay", "*", "state.sls", "release")
	if code != 0 {
		t.Fatalf("state.sls: code %d %v\n%s", code, got, stderr)
	}
	var ids []string
	for _, h := range c.Hosts() {
		ids = append(ids, h.ID)
		if s := hostSum(c, h.ID, relayDest); s != sum {
			t.Errorf("%s: %s has sha256 %q, want %s", h.ID, relayDest, s, sum)
		}
		files, chunks := relayCache(t, c, h.ID)
		if len(chunks) != 0 || !strings.Contains(strings.Join(files, " "), sum) {
			t.Errorf("%s: cache holds %v and chunks %v, want the whole file and no chunks", h.ID, files, chunks)
		}
	}
	checkApplied(t, got, ids...)
	if n := lastControllerChunks(t, e); n != 6 {
		t.Errorf("the controller sent %d chunks to 6 hosts; want each of the 6 once", n)
	}
}

// TestE2ERelayGetFile: salt-ssh's cp.get_file wrapper (Salt's
// salt/client/ssh/wrapper/cp.py) answers True and brings the file
// through the relay, each chunk once from the controller; file.recurse
// brings a tree's large file the same way. A missing file is False.
func TestE2ERelayGetFile(t *testing.T) {
	c := testhosts.New(t, 4)
	e, sum := relayEnv(t, c, 6)
	for _, h := range c.Hosts() {
		// Hosts may keep an earlier test's content cache.
		if _, err := c.Exec(context.Background(), h.ID, "rm -rf /var/tmp/.brine_*_salt/files /var/tmp/tree /var/tmp/got"); err != nil {
			t.Fatal(err)
		}
	}
	got, code, stderr := e.saltSSH("--relay", "*", "cp.get_file", "salt://release.bin", "/var/tmp/got/release.bin", "makedirs=True")
	if code != 0 {
		t.Fatalf("cp.get_file: code %d %v\n%s", code, got, stderr)
	}
	for _, h := range c.Hosts() {
		if got[h.ID] != true {
			t.Errorf("%s: %v, want True", h.ID, got[h.ID])
		}
		if s := hostSum(c, h.ID, "/var/tmp/got/release.bin"); s != sum {
			t.Errorf("%s: sha256 %q, want %s", h.ID, s, sum)
		}
	}
	if n := lastControllerChunks(t, e); n != 6 {
		t.Errorf("the controller sent %d chunks to 4 hosts; want each of the 6 once", n)
	}
	got, _, _ = e.saltSSH("--relay", "*", "cp.get_file", "salt://nope.bin", "/var/tmp/got/nope.bin")
	for _, h := range c.Hosts() {
		if got[h.ID] != false {
			t.Errorf("%s: missing file gave %v, want False", h.ID, got[h.ID])
		}
	}
	got, code, stderr = e.saltSSH("--relay", "*", "state.sls", "tree")
	if code != 0 {
		t.Fatalf("file.recurse: code %d %v\n%s", code, got, stderr)
	}
	part := sha256.Sum256(func() []byte {
		b := make([]byte, 6<<20)
		rand.NewChaCha8([32]byte{'r', 'e', 'l', 'a', 'y'}).Read(b)
		return b[:2<<20]
	}())
	for _, h := range c.Hosts() {
		if s := hostSum(c, h.ID, "/var/tmp/tree/sub/part.bin"); s != hex.EncodeToString(part[:]) {
			t.Errorf("%s: tree/sub/part.bin sha256 %q", h.ID, s)
		}
	}
	if n := lastControllerChunks(t, e); n != 2 {
		t.Errorf("file.recurse: the controller sent %d chunks to 4 hosts; want each of the 2 once", n)
	}
}

// startRelay runs salt-ssh --relay state.sls in the background.
func startRelay(ctx context.Context, e *env) <-chan int {
	done := make(chan int, 1)
	go func() {
		var stdout, stderr bytes.Buffer
		done <- run(ctx, []string{"-c", e.dir, "--out", "json", "--static", "--relay", "*", "state.sls", "release"},
			strings.NewReader(""), &stdout, &stderr)
	}()
	return done
}

// anyChunks waits until some host holds a verified chunk.
func anyChunks(t *testing.T, c *testhosts.Cluster, ids ...string) string {
	var holder string
	testhosts.Eventually(t, "a host holds a chunk", 60*time.Second, func() bool {
		for _, id := range ids {
			if len(verifiedChunks(t, c, id)) > 0 {
				holder = id
				return true
			}
		}
		return false
	})
	return holder
}

// TestE2ERelayControllerKilled: the controller dies mid-run; no host has
// the file under its final name (in the cache or at its destination),
// no temporary file survives the next run, and that run sends from the
// controller only chunks no host had verified.
func TestE2ERelayControllerKilled(t *testing.T) {
	c := testhosts.New(t, 4)
	if err := c.CapController(context.Background(), "40mbit"); err != nil {
		testhosts.Skip(t, "cap the controller's link: "+err.Error())
	}
	e, sum := relayEnv(t, c, 16)
	var ids []string
	for _, h := range c.Hosts() {
		ids = append(ids, h.ID)
	}
	ctx, kill := context.WithCancel(context.Background())
	done := startRelay(ctx, e)
	anyChunks(t, c, ids...)
	kill()
	<-done
	kept := map[string]bool{}
	for _, id := range ids {
		files, _ := relayCache(t, c, id)
		for _, f := range files {
			if f == sum {
				t.Errorf("%s: the release is in its cache though the run was killed before any host had it all", id)
			}
		}
		if s := hostSum(c, id, relayDest); s != "" {
			t.Errorf("%s: %s exists after the kill", id, relayDest)
		}
		for _, ch := range verifiedChunks(t, c, id) {
			kept[ch] = true
		}
	}
	if len(kept) == 0 {
		t.Fatal("no verified chunk survived the kill")
	}
	got, code, stderr := e.saltSSH("--relay", "*", "state.sls", "release")
	if code != 0 {
		t.Fatalf("rerun: code %d %v\n%s", code, got, stderr)
	}
	checkApplied(t, got, ids...)
	for _, id := range ids {
		if s := hostSum(c, id, relayDest); s != sum {
			t.Errorf("%s: after the rerun %s has sha256 %q", id, relayDest, s)
		}
		files, chunks := relayCache(t, c, id)
		for _, f := range append(files, chunks...) {
			if strings.HasPrefix(f, ".relay-") {
				t.Errorf("%s: temporary file %s left in the cache", id, f)
			}
		}
	}
	if n := lastControllerChunks(t, e); n > 16-len(kept) {
		t.Errorf("rerun: the controller sent %d chunks, but %d of 16 were verified on hosts already", n, len(kept))
	}
}

// TestE2ERelayHostDrops: a host's link goes down mid-relay; every other
// host gets the release (its chunks re-fed by other hosts or the
// controller) while it is away, and it finishes once it is back.
func TestE2ERelayHostDrops(t *testing.T) {
	c := testhosts.New(t, 5)
	if err := c.CapController(context.Background(), "40mbit"); err != nil {
		testhosts.Skip(t, "cap the controller's link: "+err.Error())
	}
	e, sum := relayEnv(t, c, 16)
	var ids []string
	for _, h := range c.Hosts() {
		ids = append(ids, h.ID)
	}
	done := startRelay(context.Background(), e)
	gone := anyChunks(t, c, ids...)
	if err := c.LinkDown(context.Background(), gone); err != nil {
		t.Fatal(err)
	}
	linkUp := func() {
		if err := c.LinkUp(context.Background(), gone); err != nil {
			t.Error(err)
		}
	}
	defer func() {
		if gone != "" {
			linkUp()
		}
	}()
	testhosts.Eventually(t, "every other host has the release", 120*time.Second, func() bool {
		for _, id := range ids {
			if id != gone && hostSum(c, id, relayDest) != sum {
				return false
			}
		}
		return true
	})
	linkUp()
	gone = ""
	select {
	case code := <-done:
		if code != 0 {
			t.Logf("salt-ssh exit %d (the dropped host may report its own failure)", code)
		}
	case <-time.After(180 * time.Second):
		t.Fatal("the run did not end after the host came back")
	}
}
