package fileclient

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// dirRemote is a Remote over a local Client, serving chunks of a few
// bytes so that every transfer takes several requests. corrupt serves
// other bytes than the hash promises.
type dirRemote struct {
	fc      *Client
	chunk   int
	serves  int
	corrupt bool
}

func (r *dirRemote) FileHash(ctx context.Context, rel, saltenv string) (string, string, error) {
	b, ok, err := r.fc.ReadFile(ctx, rel, saltenv)
	if err != nil || !ok {
		return "", "", err
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:]), "sha256", nil
}

func (r *dirRemote) ServeFile(ctx context.Context, rel, saltenv string, loc int) ([]byte, bool, error) {
	r.serves++
	b, ok, err := r.fc.ReadFile(ctx, rel, saltenv)
	if err != nil || !ok {
		return nil, false, err
	}
	if r.corrupt {
		b = []byte(strings.ToUpper(string(b)))
	}
	return b[min(loc, len(b)):min(loc+r.chunk, len(b))], true, nil
}

func (r *dirRemote) FileList(_ context.Context, saltenv, prefix string) ([]string, error) {
	var out []string
	for _, f := range r.fc.FileList(saltenv) {
		if strings.HasPrefix(f, prefix) {
			out = append(out, f)
		}
	}
	return out, nil
}

func (r *dirRemote) Envs(context.Context) ([]string, error) { return r.fc.Envs(), nil }

func TestRemoteClient(t *testing.T) {
	ctx := context.Background()
	srv, cache := t.TempDir(), t.TempDir()
	write(t, srv, "web/init.sls", "web-state")
	write(t, srv, "files/motd", "hello from the master")
	r := &dirRemote{fc: New(map[string][]string{"base": {srv}}, nil), chunk: 4}
	c := NewRemote(ctx, r, cache)

	b, err := c.Get(ctx, "salt://files/motd", "base")
	if err != nil || string(b) != "hello from the master" {
		t.Fatalf("get: %q %v", b, err)
	}
	cached := filepath.Join(cache, "files", "base", "files", "motd")
	if got, _ := os.ReadFile(cached); string(got) != "hello from the master" || c.LocalPath("salt://files/motd", "base") != cached {
		t.Fatalf("cache %s holds %q", cached, got)
	}
	st1, _ := os.Stat(cached)
	serves := r.serves
	if _, err := c.Get(ctx, "salt://files/motd?saltenv=base", "dev"); err != nil || r.serves != serves || c.Transfers() != 1 {
		t.Fatalf("second get transferred again: serves %d -> %d, transfers %d, %v", serves, r.serves, c.Transfers(), err)
	}
	if st2, _ := os.Stat(cached); !os.SameFile(st1, st2) {
		t.Fatal("cached file replaced although unchanged")
	}

	write(t, srv, "files/motd", "changed")
	if b, _ := c.Get(ctx, "salt://files/motd", "base"); string(b) != "changed" || c.Transfers() != 2 {
		t.Fatalf("changed file: %q, transfers %d", b, c.Transfers())
	}
	os.WriteFile(cached, []byte("tampered"), 0o600)
	if b, _ := c.Get(ctx, "salt://files/motd", "base"); string(b) != "changed" || c.Transfers() != 3 {
		t.Fatalf("tampered cache: %q, transfers %d", b, c.Transfers())
	}

	for _, url := range []string{"salt://nope", "salt://../etc/passwd", "salt://files/motd?saltenv=../x"} {
		if _, err := c.Get(ctx, url, "base"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: %v, want not found", url, err)
		}
	}
	rel, src, ok, err := c.FindSLS(ctx, "web", "base")
	if !ok || err != nil || rel != "web/init.sls" || string(src) != "web-state" {
		t.Fatalf("FindSLS: %s %q %v %v", rel, src, ok, err)
	}
	if d := cmp.Diff([]string{"web"}, c.ListStates("base")); d != "" {
		t.Fatal(d)
	}
	if d := cmp.Diff([]string{"base"}, c.Envs()); d != "" {
		t.Fatal(d)
	}

	r.corrupt = true
	write(t, srv, "files/new", "fresh")
	if _, err := c.Get(ctx, "salt://files/new", "base"); err == nil || !strings.Contains(err.Error(), "hash mismatch") {
		t.Fatalf("corrupt transfer: %v", err)
	}
	if _, err := os.Stat(filepath.Join(cache, "files", "base", "files", "new")); err == nil {
		t.Fatal("corrupt transfer was cached")
	}
}

// fuzzRemote serves one file of any name: data, advertised with hash
// sum (which may not match it), in chunks of chunk bytes.
type fuzzRemote struct {
	data  []byte
	sum   string
	chunk int
}

func (r fuzzRemote) FileHash(context.Context, string, string) (string, string, error) {
	return r.sum, "sha256", nil
}

func (r fuzzRemote) ServeFile(_ context.Context, _, _ string, loc int) ([]byte, bool, error) {
	return r.data[min(loc, len(r.data)):min(loc+r.chunk, len(r.data))], true, nil
}

func (fuzzRemote) FileList(context.Context, string, string) ([]string, error) { return nil, nil }
func (fuzzRemote) Envs(context.Context) ([]string, error)                     { return nil, nil }

// FuzzRemoteClient feeds the client names and replies a master could
// send: it never writes outside <cachedir>/files, and what it returns
// and caches always has the hash the master advertised.
func FuzzRemoteClient(f *testing.F) {
	f.Add("files/motd", "base", []byte("hello"), true, uint8(2))
	f.Add("../../etc/passwd", "..", []byte("x"), false, uint8(1))
	f.Add("a/./b/../c", "dev/../..", []byte{}, true, uint8(0))
	f.Fuzz(func(t *testing.T, rel, saltenv string, data []byte, honest bool, chunk uint8) {
		root := t.TempDir()
		sum := sha256.Sum256(data)
		r := fuzzRemote{data: data, sum: hex.EncodeToString(sum[:]), chunk: int(chunk) + 1}
		if !honest {
			r.sum = strings.Repeat("0", 64)
		}
		c := NewRemote(context.Background(), r, filepath.Join(root, "cache"))
		b, err := c.Get(context.Background(), "salt://"+rel, saltenv)
		if err == nil && (!honest || string(b) != string(data)) {
			t.Fatalf("returned %q for %q (honest %v)", b, data, honest)
		}
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && !strings.HasPrefix(p, filepath.Join(root, "cache", "files")+string(filepath.Separator)) {
				t.Fatalf("wrote %s outside the cache", p)
			}
			if err == nil && !d.IsDir() {
				if got, _ := os.ReadFile(p); string(got) != string(data) || !honest {
					t.Fatalf("cached %s holds %q", p, got)
				}
			}
			return nil
		})
	})
}
