package sshexec

import (
	"testing"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
)

func TestGrainsCache(t *testing.T) {
	c := NewGrainsCache(t.TempDir(), time.Hour)
	if g, fresh := c.Get("web1"); g != nil || fresh {
		t.Fatalf("empty cache returned %v, %v", g, fresh)
	}
	if err := c.Put("web1", ordered.FromPairs("os", "Debian", "num_cpus", 2)); err != nil {
		t.Fatal(err)
	}
	g, fresh := c.Get("web1")
	if !fresh || g.Value("os") != "Debian" || g.Value("num_cpus") != 2 {
		t.Fatalf("got %v fresh=%v", g, fresh)
	}
	if !c.Fresh("web1") {
		t.Error("new entry not fresh")
	}
	c.now = func() time.Time { return time.Now().Add(2 * time.Hour) }
	if _, fresh := c.Get("web1"); fresh || c.Fresh("web1") {
		t.Error("entry older than cache_life reported fresh")
	}
	if err := c.Forget("web1"); err != nil {
		t.Fatal(err)
	}
	if g, _ := c.Get("web1"); g != nil {
		t.Error("forgotten entry still there")
	}
	for _, bad := range []string{"", "..", "a/b"} {
		if err := c.Put(bad, ordered.New()); err == nil {
			t.Errorf("Put(%q) accepted a path-like id", bad)
		}
	}
}
