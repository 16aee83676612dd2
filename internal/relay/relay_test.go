package relay

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

const testChunk = 64 << 10

// release writes a file of n bytes from a fixed seed and returns its path
// and sha256.
func release(t testing.TB, n int) (string, string) {
	t.Helper()
	b := make([]byte, n)
	rand.NewChaCha8([32]byte{'r', 'e', 'l'}).Read(b)
	p := filepath.Join(t.TempDir(), "release.bin")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return p, hex.EncodeToString(sum[:])
}

// host is one agent running in-process: real TCP for peers, pipes for
// what would be its SSH session.
type host struct {
	id     string
	dir    string
	cancel context.CancelFunc
	done   chan error
	stdin  *io.PipeWriter
	events *io.PipeReader
	tamper func([]byte) []byte
}

func startHost(t testing.TB, id, dir string, tamper func([]byte) []byte) *host {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	inR, inW := io.Pipe()
	evR, evW := io.Pipe()
	h := &host{id: id, dir: dir, cancel: cancel, done: make(chan error, 1), stdin: inW, events: evR, tamper: tamper}
	go func() {
		err := RunAgent(ctx, AgentOptions{Dir: dir, Mode: 0o600, Listen: "127.0.0.1:0", MaxServe: 4, tamper: tamper}, inR, evW)
		inR.CloseWithError(io.ErrClosedPipe)
		evW.Close()
		h.done <- err
	}()
	t.Cleanup(func() {
		cancel()
		inW.Close()
		<-h.done
	})
	return h
}

func (h *host) peer(path, sum string) Peer {
	return Peer{ID: h.id, Host: "127.0.0.1", Stdin: h.stdin, Events: h.events, Files: map[string]string{sum: path}}
}

func checkFile(t testing.TB, dir, sum string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, sum))
	if err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	if got := sha256.Sum256(b); hex.EncodeToString(got[:]) != sum {
		t.Fatalf("%s: file does not hash to its name", dir)
	}
}

func joinAll(t testing.TB, c *Coordinator, hosts []*host, path, sum string) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, len(hosts))
	for i, h := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.Join(context.Background(), h.peer(path, sum))
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("%s: %v", hosts[i].id, err)
		}
	}
}

func newCoord(t testing.TB) *Coordinator {
	t.Helper()
	c, err := NewCoordinator(CoordOptions{ChunkSize: testChunk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func TestRelaySendsEachChunkOnce(t *testing.T) {
	path, sum := release(t, 20*testChunk+123)
	c := newCoord(t)
	var hosts []*host
	for i := range 12 {
		hosts = append(hosts, startHost(t, "h"+string(rune('a'+i)), t.TempDir(), nil))
	}
	joinAll(t, c, hosts, path, sum)
	for _, h := range hosts {
		checkFile(t, h.dir, sum)
	}
	s := c.Stats()
	if s.ControllerChunks != 21 {
		t.Errorf("controller sent %d chunks, want each of the 21 once", s.ControllerChunks)
	}
	if s.PeerChunks != 11*21 {
		t.Errorf("peers moved %d chunks, want %d", s.PeerChunks, 11*21)
	}
}

// TestRelayCorruptPeer: a host serving bad bytes is caught by the hash,
// distrusted for the rest of the run, and its dependants are fed by the
// controller; no host keeps a bad byte.
func TestRelayCorruptPeer(t *testing.T) {
	path, sum := release(t, 6*testChunk)
	c := newCoord(t)
	liar := startHost(t, "liar", t.TempDir(), func(b []byte) []byte {
		b = bytes.Clone(b)
		b[0] ^= 1
		return b
	})
	joinAll(t, c, []*host{liar}, path, sum) // it holds everything, alone
	var hosts []*host
	for i := range 4 {
		hosts = append(hosts, startHost(t, "h"+string(rune('a'+i)), t.TempDir(), nil))
	}
	joinAll(t, c, hosts, path, sum)
	for _, h := range hosts {
		checkFile(t, h.dir, sum)
	}
	s := c.Stats()
	if s.Corrupt == 0 || len(s.Distrusted) != 1 || s.Distrusted[0] != "liar" {
		t.Errorf("stats %+v: want the liar caught and distrusted", s)
	}
}

// TestRelaySourceDrops: the only holder leaves while others depend on
// it; they are fed by the controller and finish.
func TestRelaySourceDrops(t *testing.T) {
	path, sum := release(t, 16*testChunk)
	c := newCoord(t)
	seed := startHost(t, "seed", t.TempDir(), nil)
	joinAll(t, c, []*host{seed}, path, sum)
	var hosts []*host
	var once sync.Once
	for i := range 3 {
		h := startHost(t, "h"+string(rune('a'+i)), t.TempDir(), nil)
		// The seed goes away as soon as a host got its first chunk.
		r, w := io.Pipe()
		src := h.events
		go func() {
			defer w.Close()
			buf := make([]byte, 4096)
			for {
				n, err := src.Read(buf)
				if n > 0 {
					if strings.Contains(string(buf[:n]), "have ") {
						once.Do(func() {
							seed.cancel()
							seed.stdin.Close()
							<-seed.done
							seed.done <- nil
						})
					}
					w.Write(buf[:n])
				}
				if err != nil {
					return
				}
			}
		}()
		h.events = r
		hosts = append(hosts, h)
	}
	joinAll(t, c, hosts, path, sum)
	for _, h := range hosts {
		checkFile(t, h.dir, sum)
	}
}

// TestRelayResumes: a run cut short leaves no file under its name and no
// temporary file, and the next run sends only the chunks not yet
// verified there.
func TestRelayResumes(t *testing.T) {
	for _, damage := range []bool{false, true} {
		t.Run(map[bool]string{false: "intact", true: "damaged"}[damage], func(t *testing.T) { testResume(t, damage) })
	}
}

// testResume cuts a run after 4 verified chunks; with damage, one of
// them is then changed on disk, and the rerun must fetch it again.
func testResume(t *testing.T, damage bool) {
	path, sum := release(t, 10*testChunk)
	dir := t.TempDir()
	f, err := Split(path, testChunk)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	inR, inW := io.Pipe()
	evR, evW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- RunAgent(context.Background(), AgentOptions{Dir: dir, Mode: 0o600}, inR, evW)
		evW.Close()
	}()
	go io.Copy(io.Discard, evR)
	h := Header{Key: bytes.Repeat([]byte{7}, KeySize), ChunkSize: testChunk, Files: []File{f}}
	line, _ := jsonLine(h)
	inW.Write(line)
	for i := range 4 {
		inW.Write([]byte("C " + f.Chunks[i] + " " + itoa(testChunk) + "\n"))
		inW.Write(data[i*testChunk : (i+1)*testChunk])
	}
	inW.Write([]byte("C " + f.Chunks[4] + " " + itoa(testChunk) + "\n"))
	inW.Write(data[4*testChunk : 4*testChunk+100])
	inW.Close() // the controller dies mid-chunk
	if err := <-done; err == nil {
		t.Fatal("agent reported success when its controller died")
	}
	if _, err := os.Stat(filepath.Join(dir, sum)); !os.IsNotExist(err) {
		t.Fatalf("final file exists after a cut run: %v", err)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), tmpPrefix) {
			t.Fatalf("temporary file %s left behind", e.Name())
		}
	}
	want := 6
	if damage {
		part := filepath.Join(dir, ".chunks", sum+partSuffix)
		fh, err := os.OpenFile(part, os.O_WRONLY, 0)
		if err != nil {
			t.Fatalf("the cut run left no part file: %v", err)
		}
		fh.WriteAt([]byte{0xff, 0xee}, 2*testChunk+5)
		fh.Close()
		want = 7
	}
	c := newCoord(t)
	joinAll(t, c, []*host{startHost(t, "again", dir, nil)}, path, sum)
	checkFile(t, dir, sum)
	if s := c.Stats(); s.ControllerChunks != want {
		t.Errorf("rerun sent %d chunks, want the %d not verified before", s.ControllerChunks, want)
	}
	if ents, _ := os.ReadDir(filepath.Join(dir, ".chunks")); len(ents) != 0 {
		t.Errorf("chunks left after the file is whole: %v", ents)
	}
}

func jsonLine(h Header) ([]byte, error) {
	b, err := json.Marshal(h)
	return append(b, '\n'), err
}

func itoa(n int) string { return strconv.Itoa(n) }
