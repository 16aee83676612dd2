package fileclient

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func write(t *testing.T, root, rel, data string) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestClient(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	write(t, a, "top.sls", "a-top")
	write(t, a, "web/init.sls", "web")
	write(t, a, "1/10.sls", "one-ten")
	write(t, a, "1.10.sls", "dotted")
	write(t, b, "top.sls", "b-top")
	write(t, b, "extra.sls", "extra")
	c := New(map[string][]string{"base": {a, b}, "dev": {b}}, nil)
	ctx := context.Background()

	if diff := cmp.Diff([]string{"base", "dev"}, c.Envs()); diff != "" {
		t.Errorf("Envs (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"1.10", "extra", "top", "web"}, c.ListStates("base")); diff != "" {
		t.Errorf("ListStates (-want +got):\n%s", diff)
	}
	got, _, _ := c.ReadFile(ctx, "top.sls", "base")
	if string(got) != "a-top" {
		t.Errorf("first root must win, got %q", got)
	}
	rel, src, ok, err := c.FindSLS(ctx, "1.10", "base")
	if err != nil || !ok || rel != "1/10.sls" || string(src) != "one-ten" {
		t.Errorf("FindSLS(1.10) = %q %q %v %v; dots are directories", rel, src, ok, err)
	}
	rel, _, ok, _ = c.FindSLS(ctx, "web", "base")
	if !ok || rel != "web/init.sls" {
		t.Errorf("FindSLS(web) = %q %v", rel, ok)
	}
	if _, err := c.Get(ctx, "salt://missing", "base"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Get(missing) = %v, want ErrNotExist", err)
	}
	if data, err := c.Get(ctx, "salt://top.sls?saltenv=dev", "base"); err != nil || string(data) != "b-top" {
		t.Errorf("Get with ?saltenv= = %q %v", data, err)
	}
	if _, ok, _ := c.ReadFile(ctx, "../etc/passwd", "base"); ok {
		t.Error("paths must not climb out of the roots")
	}
}
