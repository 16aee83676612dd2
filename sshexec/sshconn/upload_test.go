package sshconn

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brinesalt/brine/internal/testsupport/sshtest"
)

func TestUpload(t *testing.T) {
	f := newFixture(t, sshtest.Options{})
	c := f.dial(t)
	dir := t.TempDir()
	big := make([]byte, 3<<20+17) // several chunks, not a multiple of one
	rand.Read(big)
	tests := []struct {
		name     string
		path     string
		existing []byte
		data     []byte
		mode     os.FileMode
		opts     []UploadOption
	}{
		{"new file", filepath.Join(dir, "a"), nil, []byte("hello"), 0o640, nil},
		{"replace", filepath.Join(dir, "b"), []byte("old contents, longer"), []byte("new"), 0o600, nil},
		{"large", filepath.Join(dir, "thin.tgz"), nil, big, 0o600, nil},
		{"empty", filepath.Join(dir, "empty"), nil, nil, 0o644, nil},
		{"parents", filepath.Join(dir, "x", "y", "z"), nil, []byte("deep"), 0o700, []UploadOption{WithParents(0o750)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.existing != nil {
				writeFile(t, tc.path, string(tc.existing))
			}
			if err := c.Upload(context.Background(), bytes.NewReader(tc.data), tc.path, tc.mode, tc.opts...); err != nil {
				t.Fatalf("Upload: %v", err)
			}
			got, err := os.ReadFile(tc.path)
			if err != nil || !bytes.Equal(got, tc.data) {
				t.Fatalf("remote file = %d bytes, %v; want %d bytes", len(got), err, len(tc.data))
			}
			if st, _ := os.Stat(tc.path); st.Mode().Perm() != tc.mode {
				t.Errorf("mode = %v, want %v", st.Mode().Perm(), tc.mode)
			}
			assertNoTemp(t, filepath.Dir(tc.path))
		})
	}
	if st, err := os.Stat(filepath.Join(dir, "x", "y")); err != nil || st.Mode().Perm() != 0o750 {
		t.Errorf("parent dir = %v, %v; want mode 0750", st, err)
	}
	if got := f.srv.Stats(); got.Conns != 1 || got.SFTPOpens != 1 || got.SFTPWrites != int64(len(tests)) {
		t.Errorf("server stats = %+v, want one connection, one SFTP subsystem, %d uploads", got, len(tests))
	}
}

// TestUploadWithDir: WithDir makes a missing directory with the mode and
// gives an existing one the mode too (a thin_dir must be private), where
// WithParents leaves an existing directory as it is.
func TestUploadWithDir(t *testing.T) {
	f := newFixture(t, sshtest.Options{})
	c := f.dial(t)
	dir := t.TempDir()
	open := filepath.Join(dir, "open")
	if err := os.Mkdir(open, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		dir  string
		opt  UploadOption
		want os.FileMode
	}{
		{open, WithParents(0o700), 0o755},
		{open, WithDir(0o700), 0o700},
		{filepath.Join(dir, "new"), WithDir(0o770), 0o770},
	} {
		if err := c.Upload(context.Background(), strings.NewReader("x"), filepath.Join(tc.dir, "f"), 0o600, tc.opt); err != nil {
			t.Fatal(err)
		}
		if st, err := os.Stat(tc.dir); err != nil || st.Mode().Perm() != tc.want {
			t.Errorf("%s: %v, %v; want mode %v", tc.dir, st.Mode().Perm(), err, tc.want)
		}
	}
}

func TestUploadFailureLeavesTargetIntact(t *testing.T) {
	f := newFixture(t, sshtest.Options{})
	c := f.dial(t)
	dir := t.TempDir()
	target := filepath.Join(dir, "thin.tgz")
	writeFile(t, target, "previous")

	readErr := errors.New("disk on fire")
	r := io.MultiReader(bytes.NewReader(make([]byte, 1<<20)), errReader{readErr})
	if err := c.Upload(context.Background(), r, target, 0o600); !errors.Is(err, readErr) {
		t.Fatalf("Upload error = %v, want the reader's error", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Upload(ctx, strings.NewReader("x"), target, 0o600); !errors.Is(err, context.Canceled) {
		t.Fatalf("Upload error = %v, want context.Canceled", err)
	}
	if got, _ := os.ReadFile(target); string(got) != "previous" {
		t.Errorf("target = %q, want it untouched", got)
	}
	assertNoTemp(t, dir)
	if err := c.Upload(context.Background(), strings.NewReader("x"), filepath.Join(dir, "nodir", "f"), 0o600); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Upload into a missing dir without WithParents = %v, want fs.ErrNotExist", err)
	}
}

func TestUploadConnectionDropped(t *testing.T) {
	f := newFixture(t, sshtest.Options{DropAfterSFTPBytes: 256 << 10})
	c := f.dial(t)
	dir := t.TempDir()
	target := filepath.Join(dir, "thin.tgz")
	err := c.Upload(context.Background(), bytes.NewReader(make([]byte, 4<<20)), target, 0o600)
	if !errors.Is(err, ErrConnLost) {
		t.Fatalf("Upload error = %v, want ErrConnLost", err)
	}
	if _, err := os.Stat(target); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("target exists after a dropped upload: %v", err)
	}
	// The temp file may remain (the connection is gone); it must be the
	// hidden temp name, never the target.
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".thin.tgz.tmp-") {
			t.Errorf("unexpected file %s", e.Name())
		}
	}
}

func TestRemoteFileHelpers(t *testing.T) {
	c := newFixture(t, sshtest.Options{}).dial(t)
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "thin", "dir")
	if err := c.MkdirAll(ctx, dir, 0o700); err != nil {
		t.Fatalf("MkdirAll: %v", err)
	}
	if err := c.MkdirAll(ctx, dir, 0o700); err != nil {
		t.Fatalf("MkdirAll existing: %v", err)
	}
	st, err := c.Stat(ctx, dir)
	if err != nil || !st.IsDir() || st.Mode().Perm() != 0o700 {
		t.Fatalf("Stat = %v, %v; want a 0700 dir", st, err)
	}
	if err := c.Remove(ctx, dir); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	if _, err := c.Stat(ctx, dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Stat removed = %v, want fs.ErrNotExist", err)
	}
	if err := c.Remove(ctx, dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Remove missing = %v, want fs.ErrNotExist", err)
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

func assertNoTemp(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temp file left behind: %s", e.Name())
		}
	}
}

// noPosixRename hides the posix-rename extension, as some servers lack it.
type noPosixRename struct{ renamer }

func (noPosixRename) HasExtension(string) (string, bool) { return "", false }

func (noPosixRename) PosixRename(string, string) error {
	return errors.New("posix-rename used although not advertised")
}

func TestRenameOverWithoutPosixRename(t *testing.T) {
	c := newFixture(t, sshtest.Options{}).dial(t)
	s, err := c.SFTP()
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.HasExtension("posix-rename@openssh.com"); !ok {
		t.Error("test server does not advertise posix-rename")
	}
	dir := t.TempDir()
	src, dst := filepath.Join(dir, ".f.tmp-1"), filepath.Join(dir, "f")
	for _, existing := range []bool{false, true} {
		writeFile(t, src, "new")
		if existing {
			writeFile(t, dst, "old")
		}
		if err := renameOver(noPosixRename{s}, src, dst); err != nil {
			t.Fatalf("renameOver (existing %v): %v", existing, err)
		}
		if got, _ := os.ReadFile(dst); string(got) != "new" {
			t.Errorf("dst = %q, want new", got)
		}
	}
}

// TestCtxReaderSize: Upload's reader reports what is left to send, which
// is what makes sftp.File.ReadFrom pipeline the writes (without it,
// ReadFrom waits for each 128 KiB write's reply in turn).
func TestCtxReaderSize(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "thin")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(make([]byte, 1000)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Seek(100, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		r    io.Reader
		want int64
	}{
		{"file, partly read", f, 900},
		{"bytes", bytes.NewReader(make([]byte, 42)), 42},
		{"unknown", io.MultiReader(strings.NewReader("x")), -1},
	} {
		if got := (ctxReader{ctx, tc.r}).Size(); got != tc.want {
			t.Errorf("%s: Size() = %d, want %d", tc.name, got, tc.want)
		}
	}
	if pos, _ := f.Seek(0, io.SeekCurrent); pos != 100 {
		t.Errorf("Size moved the file's offset to %d", pos)
	}
}
