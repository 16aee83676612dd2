package coregrains_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/coregrains"
	_ "github.com/brinesalt/brine/state/coregrains/grainsyaml"
)

func TestGrainsFileOverlayAndYAML(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "grains")
	if err := os.WriteFile(file, []byte("roles:\n  - web\n  - db\nenabled: yes\nmode: 0755\nos: Custom\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	g, err := coregrains.Gather(context.Background(), coregrains.GatherOptions{Root: "testdata/debian12", Opts: ordered.FromPairs("config_dir", dir)})
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]any{"roles": []any{"web", "db"}, "enabled": true, "mode": 493, "os": "Custom"} {
		if got := g.Value(k); !cmp.Equal(want, got) {
			t.Errorf("grain %s = %#v, want %#v", k, got, want)
		}
	}
	m := ordered.FromPairs("b", "yes", "a", ordered.FromPairs("x", []any{1, "two", nil}))
	if err := coregrains.SaveFile(file, m); err != nil {
		t.Fatal(err)
	}
	back, err := coregrains.LoadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(m, back, cmp.Comparer(func(a, b *ordered.Map) bool {
		ja, _ := a.MarshalJSON()
		jb, _ := b.MarshalJSON()
		return string(ja) == string(jb)
	})); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}
