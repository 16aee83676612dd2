package cp

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
)

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func gz(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(h[:])
}

// sendStaged sends data in chunks of n as Brine's salt-cp does and
// returns each chunk's answer.
func sendStaged(t *testing.T, f fixture, dest string, data []byte, n int, hash string) []any {
	t.Helper()
	var out []any
	for off := 0; off == 0 || off < len(data); off += n {
		end := min(off+n, len(data))
		kw := ordered.FromPairs("transfer", "t1", "offset", off)
		if end == len(data) {
			kw.Set("hash", hash)
		}
		f.env.Context = map[string]any{}
		out = append(out, f.run(t, "cp.recv_chunked", []any{dest, b64(gz(t, data[off:end])), off > 0, true, 0o640}, kw))
	}
	return out
}

func TestRecvChunkedStaged(t *testing.T) {
	f := newFixture(t, true)
	dir := t.TempDir()
	data := bytes.Repeat([]byte("0123456789abcdef"), 5000)
	dest := filepath.Join(dir, "sub", "big.bin")
	for i, r := range sendStaged(t, f, dest, data, 7000, sum(data)) {
		if r != true {
			t.Fatalf("chunk %d: %v", i, r)
		}
	}
	if got := read(t, dest); got != string(data) {
		t.Fatalf("content differs: %d bytes, want %d", len(got), len(data))
	}
	if st, _ := os.Stat(dest); st.Mode().Perm() != 0o640 {
		t.Errorf("mode = %v", st.Mode())
	}
	assertNoStaging(t, filepath.Dir(dest))

	// A wrong hash leaves the old file and no staging file.
	res := sendStaged(t, f, dest, []byte("new content"), 4, sum([]byte("other")))
	if last, _ := res[len(res)-1].(string); !strings.Contains(last, "hash mismatch") || f.env.Context["retcode"] != 1 {
		t.Fatalf("bad hash: %v retcode %v", res, f.env.Context["retcode"])
	}
	if read(t, dest) != string(data) {
		t.Fatal("destination changed by a failed transfer")
	}
	assertNoStaging(t, filepath.Dir(dest))

	// A chunk that does not continue the staging file is refused.
	f.run(t, "cp.recv_chunked", []any{dest, b64([]byte("abc")), false, false}, ordered.FromPairs("transfer", "t2"))
	got := f.run(t, "cp.recv_chunked", []any{dest, b64([]byte("def")), true, false}, ordered.FromPairs("transfer", "t2", "offset", 10))
	if s, _ := got.(string); !strings.Contains(s, "chunk out of order") {
		t.Fatalf("out of order chunk: %v", got)
	}
	assertNoStaging(t, filepath.Dir(dest))

	// An empty file is one empty chunk.
	empty := filepath.Join(dir, "empty")
	if r := sendStaged(t, f, empty, nil, 10, sum(nil)); r[0] != true {
		t.Fatalf("empty: %v", r)
	}
	if st, err := os.Stat(empty); err != nil || st.Size() != 0 {
		t.Fatalf("empty file: %v %v", st, err)
	}
}

func assertNoStaging(t *testing.T, dir string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".salt-cp-") {
			t.Errorf("staging file left: %s", e.Name())
		}
	}
}

func TestRecvChunkedSaltWay(t *testing.T) {
	f := newFixture(t, true)
	dir := t.TempDir()
	dest := filepath.Join(dir, "new", "f.txt")
	for i, part := range []string{"hello ", "world"} {
		if r := f.run(t, "cp.recv_chunked", []any{dest, b64([]byte(part)), i > 0, false, 0o600}, nil); r != true {
			t.Fatalf("chunk %d: %v", i, r)
		}
	}
	if got := read(t, dest); got != "hello world" {
		t.Fatalf("content %q", got)
	}
	if r := f.run(t, "cp.recv_chunked", []any{filepath.Join(dir, "d1", "d2"), nil}, nil); r != true || !isDir(filepath.Join(dir, "d1", "d2")) {
		t.Fatalf("empty dir: %v", r)
	}
	if r := f.run(t, "cp.recv_chunked", []any{dest, nil}, nil); r != "Path exists and is a file" {
		t.Fatalf("dir over file: %v", r)
	}
	ro := filepath.Join(dir, "ro")
	os.Mkdir(ro, 0o500)
	f.env.Context = map[string]any{}
	r, _ := f.run(t, "cp.recv_chunked", []any{filepath.Join(ro, "x"), b64([]byte("x")), false, false}, nil).(string)
	if os.Geteuid() != 0 && (!strings.HasPrefix(r, "[Errno 13] Permission denied: ") || f.env.Context["retcode"] != 1) {
		t.Fatalf("unwritable: %q %v", r, f.env.Context["retcode"])
	}
}

func TestRecv(t *testing.T) {
	f := newFixture(t, true)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "keep"), []byte("old"), 0o600)
	got := f.run(t, "cp.recv", []any{ordered.FromPairs("/src/a.txt", "A", "/src/keep", "new"), dir}, nil)
	want := `{"` + filepath.Join(dir, "a.txt") + `":true,"` + filepath.Join(dir, "keep") + `":true}`
	if d := cmp.Diff(want, js(t, got)); d != "" {
		t.Fatal(d)
	}
	if read(t, filepath.Join(dir, "keep")) != "new" {
		t.Fatal("keep not replaced")
	}
	if st, _ := os.Stat(filepath.Join(dir, "keep")); st.Mode().Perm() != 0o600 {
		t.Errorf("existing mode not kept: %v", st.Mode())
	}
	if got := f.run(t, "cp.recv", []any{ordered.FromPairs("/src/a", "A"), filepath.Join(dir, "no", "such", "x")}, nil); got != "Destination unavailable" {
		t.Fatalf("missing parent: %v", got)
	}
	got = f.run(t, "cp.recv", []any{ordered.FromPairs("/src/a", "A"), filepath.Join(dir, "named")}, nil)
	if d := cmp.Diff(`{"`+filepath.Join(dir, "named")+`":true}`, js(t, got)); d != "" || read(t, filepath.Join(dir, "named")) != "A" {
		t.Fatal("dest as a file name:", d)
	}
	assertNoStaging(t, dir)
}

func FuzzRecvChunked(f *testing.F) {
	f.Add("aGVsbG8=", true, int64(0), "")
	f.Add("H4sIAAAAAAAA/8pIzcnJBwQAAP//hqYQNgUAAAA=", false, int64(5), "sha256:00")
	fx := newFixture(f, true)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, chunk string, compressed bool, offset int64, hash string) {
		fx.env.Context = map[string]any{}
		dest := filepath.Join(dir, "f")
		_, err := fx.env.Run(t.Context(), "cp.recv_chunked", []any{dest, chunk, offset > 0, compressed},
			ordered.FromPairs("transfer", "fz", "offset", offset, "hash", hash))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(stagingPath(dest, "fz")); err == nil && hash != "" {
			t.Fatal("staging file left after a final chunk")
		}
	})
}

// TestRecvChunkedSpecialBits: salt-cp sends st_mode's last four octal
// digits and cp.recv_chunked chmods with them as they are, so a setuid,
// setgid or sticky source keeps its bit (os.Chmod needs os.ModeSetuid &c.
// for that, and drops 0o4000 silently).
func TestRecvChunkedSpecialBits(t *testing.T) {
	f := newFixture(t, true)
	dir := t.TempDir()
	for _, tc := range []struct {
		mode int
		want os.FileMode
	}{
		{0o4750, os.ModeSetuid | 0o750},
		{0o2755, os.ModeSetgid | 0o755},
		{0o1777, os.ModeSticky | 0o777},
	} {
		dest := filepath.Join(dir, fmt.Sprintf("f%o", tc.mode))
		if r := f.run(t, "cp.recv_chunked", []any{dest, b64(gz(t, []byte("x"))), false, true, tc.mode}, nil); r != true {
			t.Fatalf("mode %o: %v", tc.mode, r)
		}
		if st, err := os.Stat(dest); err != nil || st.Mode() != tc.want {
			t.Errorf("mode %o: got %v, %v; want %v", tc.mode, st.Mode(), err, tc.want)
		}
	}
}
