package minion

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/config"
	"github.com/brinesalt/brine/internal/ordered"
)

func TestSplitArgs(t *testing.T) {
	args, kw := splitArgs([]any{"echo a=b", "x=1", "2", "==", ordered.FromPairs("__kwarg__", true, "y", 3), ordered.FromPairs("z", 1)})
	if d := cmp.Diff([]any{"echo a=b", "2", "==", ordered.FromPairs("z", 1)}, args, cmp.Comparer(func(a, b *ordered.Map) bool { return a.Len() == b.Len() })); d != "" {
		t.Fatalf("args: %s", d)
	}
	if kw.Value("x") != "1" || kw.Value("y") != 3 || kw.Len() != 2 {
		t.Fatalf("kwargs: %v", kw.Keys())
	}
}

func TestMinionConfig(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "minion"), []byte("master: [m1.example, m2.example]\nid: web1\nacceptance_wait_time: 2\nrecon_default: 250\ngrains: {role: web}\nsomething_else: 1\n"), 0o600)
	os.MkdirAll(filepath.Join(dir, "minion.d"), 0o700)
	os.WriteFile(filepath.Join(dir, "minion.d", "x.conf"), []byte("master_port: 5506\n"), 0o600)
	c, err := config.LoadMinion(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"m1.example", "m2.example"}, c.Masters); d != "" {
		t.Fatal(d)
	}
	if c.ID != "web1" || c.MasterPort != 5506 || c.PublishPort != 4505 || c.AcceptanceWaitTime != 2*time.Second ||
		c.ReconDefault != 250*time.Millisecond || c.Grains.Value("role") != "web" || c.Raw.Value("something_else") != 1 {
		t.Fatalf("config = %+v", c)
	}
	c.PKIDir = filepath.Join(dir, "pki")
	m, err := New(Options{Config: c})
	if err != nil {
		t.Fatal(err)
	}
	if got := m.masterAddr(c.MasterPort); got != "m1.example:5506" {
		t.Fatalf("master address %s", got)
	}
	os.WriteFile(filepath.Join(dir, "minion"), []byte("master: salt\nrecon_max: soon\n"), 0o600)
	if _, err := config.LoadMinion(dir, nil); err == nil {
		t.Fatal("bad recon_max accepted")
	}
}
