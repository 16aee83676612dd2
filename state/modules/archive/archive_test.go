package archive

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/testsupport/testhosts"
	"github.com/brinesalt/brine/state/modules"
)

type files map[string][]byte

func (f files) Get(_ context.Context, url, _ string) ([]byte, error) {
	b, ok := f[url]
	if !ok {
		return nil, fs.ErrNotExist
	}
	return b, nil
}

func newEnv(f files) *modules.Env {
	return (&modules.Env{Pillar: ordered.New(), Opts: ordered.New(), Registry: modules.Default,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)), Context: map[string]any{}, Files: f}).WithGrains(ordered.New())
}

func js(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func call(t *testing.T, env *modules.Env, fun string, args []any, kw *ordered.Map) any {
	t.Helper()
	got, err := env.Run(context.Background(), fun, args, kw)
	if err != nil {
		t.Fatalf("%s %v: %v", fun, args, err)
	}
	return got
}

// srcTree makes proj/{a.txt, sub/b.txt, link -> a.txt} and top.txt.
func srcTree(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for p, c := range map[string]string{"proj/a.txt": "a", "proj/sub/b.txt": "b", "top.txt": "t"} {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, p), []byte(c), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("a.txt", filepath.Join(dir, "proj/link")); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestTarAndList(t *testing.T) {
	if _, err := exec.LookPath("tar"); err != nil {
		testhosts.Skip(t, "no tar")
	}
	dir := srcTree(t)
	env := newEnv(nil)
	out := t.TempDir()
	for _, tc := range []struct{ file, opts string }{{"x.tar.gz", "czf"}, {"x.tar", "cf"}, {"x.tar.xz", "cJf"}, {"x.tbz2", "cjf"}} {
		t.Run(tc.file, func(t *testing.T) {
			tarball := filepath.Join(out, tc.file)
			if _, err := env.Run(context.Background(), "archive.tar", []any{tc.opts, tarball}, ordered.FromPairs("sources", "proj, top.txt", "cwd", dir)); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(tarball); err != nil {
				t.Skipf("tar could not write %s (compressor missing?)", tc.file)
			}
			got := call(t, env, "archive.list", []any{tarball}, nil)
			if diff := cmp.Diff(`["proj/","proj/a.txt","proj/link","proj/sub/","proj/sub/b.txt","top.txt"]`, js(t, got)); diff != "" {
				t.Error(diff)
			}
		})
	}
	tarball := filepath.Join(out, "x.tar.gz")
	got := call(t, env, "archive.list", []any{tarball}, ordered.FromPairs("verbose", true))
	want := `{"dirs":["proj/","proj/sub/"],"files":["proj/a.txt","proj/sub/b.txt","top.txt"],"links":["proj/link"],"top_level_dirs":["proj/"],"top_level_files":["top.txt"],"top_level_links":[]}`
	if diff := cmp.Diff(want, js(t, got)); diff != "" {
		t.Error(diff)
	}
	got = call(t, env, "archive.list", []any{tarball}, ordered.FromPairs("strip_components", 1))
	if diff := cmp.Diff(`["a.txt","link","sub/","sub/b.txt"]`, js(t, got)); diff != "" {
		t.Error(diff)
	}
	b, _ := os.ReadFile(tarball)
	salt := newEnv(files{"salt://pkgs/x.tgz": b})
	if got := call(t, salt, "archive.list", []any{"salt://pkgs/x.tgz"}, nil); len(got.([]any)) != 6 {
		t.Errorf("salt:// list = %v", got)
	}
	sum := sha256.Sum256(b)
	if got := call(t, env, "archive.list", []any{tarball}, ordered.FromPairs("source_hash", "sha256="+hex.EncodeToString(sum[:]))); len(got.([]any)) != 6 {
		t.Errorf("list with its own source_hash = %v", got)
	}
	if _, err := env.Run(context.Background(), "archive.list", []any{tarball}, ordered.FromPairs("source_hash", "sha256="+strings.Repeat("0", 64))); err == nil || !strings.Contains(err.Error(), "not the source_hash") {
		t.Errorf("list with a wrong source_hash: %v", err)
	}
	dest := t.TempDir()
	call(t, env, "archive.tar", []any{"xzf", tarball}, ordered.FromPairs("dest", dest))
	if b, err := os.ReadFile(filepath.Join(dest, "proj/sub/b.txt")); err != nil || string(b) != "b" {
		t.Errorf("extracted = %q, %v", b, err)
	}
	for _, bad := range []struct {
		args []any
		kw   *ordered.Map
	}{
		{[]any{"", tarball}, nil},
		{[]any{"/x/unknown.bin"}, nil},
		{[]any{tarball}, ordered.FromPairs("strip_components", 0)},
		{[]any{tarball}, ordered.FromPairs("archive_format", "rar")},
	} {
		fun := "archive.list"
		if len(bad.args) == 2 {
			fun = "archive.tar"
		}
		if _, err := env.Run(context.Background(), fun, bad.args, bad.kw); err == nil {
			t.Errorf("%s %v %v succeeded", fun, bad.args, bad.kw)
		}
	}
}

func TestZipRoundTrip(t *testing.T) {
	dir := srcTree(t)
	env := newEnv(nil)
	zf := filepath.Join(t.TempDir(), "x.zip")
	got := call(t, env, "archive.zip", []any{zf, "proj,top.txt"}, ordered.FromPairs("cwd", dir))
	if diff := cmp.Diff(`["proj/","proj/a.txt","proj/link","proj/sub/","proj/sub/b.txt","top.txt"]`, js(t, got)); diff != "" {
		t.Error(diff)
	}
	if _, err := env.Run(context.Background(), "archive.zip", []any{zf, "proj"}, nil); err == nil {
		t.Error("relative sources without cwd succeeded")
	}
	listed := call(t, env, "archive.list", []any{zf}, ordered.FromPairs("verbose", true))
	want := `{"dirs":["proj/","proj/sub/"],"files":["proj/a.txt","proj/sub/b.txt","top.txt"],"links":["proj/link"],"top_level_dirs":["proj/"],"top_level_files":["top.txt"],"top_level_links":[]}`
	if diff := cmp.Diff(want, js(t, listed)); diff != "" {
		t.Error(diff)
	}
	dest := t.TempDir()
	got = call(t, env, "archive.unzip", []any{zf, dest}, ordered.FromPairs("excludes", "top.txt", "trim_output", 3))
	if diff := cmp.Diff(`["proj/","proj/a.txt","proj/link","List trimmed after 3 files."]`, js(t, got)); diff != "" {
		t.Error(diff)
	}
	if l, err := os.Readlink(filepath.Join(dest, "proj/link")); err != nil || l != "a.txt" {
		t.Errorf("link = %q, %v", l, err)
	}
	if st, err := os.Stat(filepath.Join(dest, "proj/a.txt")); err != nil || st.Mode().Perm() != 0o640 {
		t.Errorf("a.txt mode = %v, %v", st, err)
	}
	if _, err := os.Stat(filepath.Join(dest, "top.txt")); err == nil {
		t.Error("excluded top.txt extracted")
	}
	if enc := call(t, env, "archive.is_encrypted", []any{zf}, nil); enc != false {
		t.Errorf("is_encrypted = %v", enc)
	}
}

func TestUnzipRefusesEscape(t *testing.T) {
	zf := filepath.Join(t.TempDir(), "evil.zip")
	f, _ := os.Create(zf)
	zw := zip.NewWriter(f)
	w, _ := zw.Create("../evil.txt")
	w.Write([]byte("x"))
	zw.Close()
	f.Close()
	dest := filepath.Join(t.TempDir(), "d")
	os.Mkdir(dest, 0o755)
	if _, err := newEnv(nil).Run(context.Background(), "archive.unzip", []any{zf, dest}, nil); err == nil {
		t.Error("unzip wrote outside dest")
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dest), "evil.txt")); err == nil {
		t.Error("evil.txt exists")
	}
}

func FuzzListZip(f *testing.F) {
	f.Add([]byte("PK\x03\x04"))
	f.Fuzz(func(t *testing.T, b []byte) {
		r := bytesReader(b)
		if m, err := listZip(r); err == nil {
			shape(m, 1, true)
		}
		if m, err := listTar(context.Background(), bytesReader(b), ""); err == nil {
			shape(m, 2, false)
		}
	})
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }

// TestUnzipSpecialBits: Salt's unzip chmods with external_attr >> 16, so
// setuid, setgid and sticky bits of the members survive.
func TestUnzipSpecialBits(t *testing.T) {
	zf := filepath.Join(t.TempDir(), "bits.zip")
	f, err := os.Create(zf)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	want := map[string]os.FileMode{"suid": os.ModeSetuid | 0o755, "sgid": os.ModeSetgid | 0o750, "sticky/": os.ModeDir | os.ModeSticky | 0o777}
	for _, name := range []string{"sgid", "sticky/", "suid"} {
		h := &zip.FileHeader{Name: name}
		h.SetMode(want[name])
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(name, "/") {
			w.Write([]byte("x"))
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	dest := t.TempDir()
	call(t, newEnv(nil), "archive.unzip", []any{zf, dest}, nil)
	for name, mode := range want {
		if st, err := os.Stat(filepath.Join(dest, name)); err != nil || st.Mode() != mode {
			t.Errorf("%s: %v, %v; want %v", name, st.Mode(), err, mode)
		}
	}
}
