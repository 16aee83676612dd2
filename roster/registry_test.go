package roster

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestOpenPerBackendFile checks `--roster flat,ansible=PATH`: roster_file
// for flat, PATH for ansible, and --update-roster writing to flat's file.
func TestOpenPerBackendFile(t *testing.T) {
	dir := t.TempDir()
	flat := filepath.Join(dir, "roster")
	inv := filepath.Join(dir, "hosts")
	own := filepath.Join(dir, "own-roster")
	for p, body := range map[string]string{flat: "web1: 10.0.0.5\n", inv: "[db]\ndb1 ansible_host=10.0.0.7\n", own: "web9: 10.0.0.9\n"} {
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg := testConfig()
	cfg.File = flat
	cfg.UpdateRoster = true
	cfg.Reachable = func(context.Context, string) bool { return true }
	ids := func(names, tgt string) []string {
		t.Helper()
		r, err := Open(context.Background(), names, cfg)
		if err != nil {
			t.Fatal(err)
		}
		ts, err := r.Targets(context.Background(), tgt, "glob")
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, x := range ts {
			out = append(out, x.ID+"="+x.Host)
		}
		return out
	}
	if d := cmp.Diff([]string{"web1=10.0.0.5", "db1=10.0.0.7"}, ids("flat,ansible="+inv, "*")); d != "" {
		t.Errorf("flat,ansible=PATH (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"web9=10.0.0.9"}, ids("flat="+own, "*")); d != "" {
		t.Errorf("flat=PATH (-want +got):\n%s", d)
	}
	ids("flat="+own+",ansible="+inv, "10.0.0.20")
	ids("ansible="+inv, "10.0.0.21")
	ownSrc, _ := os.ReadFile(own)
	flatSrc, _ := os.ReadFile(flat)
	invSrc, _ := os.ReadFile(inv)
	if !strings.Contains(string(ownSrc), "10.0.0.20:\n") || strings.Contains(string(flatSrc), "10.0.0.2") || strings.Contains(string(invSrc), "10.0.0.21") {
		t.Errorf("--update-roster wrote to the wrong file:\nown:\n%s\nflat:\n%s\ninventory:\n%s", ownSrc, flatSrc, invSrc)
	}
}
