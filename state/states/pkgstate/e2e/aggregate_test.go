package e2e

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/testsupport/pkgtest"
)

// TestStateAggregateEndToEnd installs three local .deb packages with
// state_aggregate on: the first pkg.installed takes the other two (one
// with a version) into a single apt-get install, and their own states
// then find them installed (the unit tests in state/states/pkgstate and
// state/run cover aggregation being off).
func TestStateAggregateEndToEnd(t *testing.T) {
	repo := pkgtest.NewAptRepo(t)
	repo.Use()
	a, b, c := "brineagg-a", "brineagg-b", "brineagg-c"
	repo.Add(a, "1.0")
	repo.Add(b, "1.0")
	repo.Add(c, "2.0")
	root := t.TempDir()
	sls := "first:\n  pkg.installed:\n    - pkgs:\n      - " + a + "\n" +
		"second:\n  pkg.installed:\n    - name: " + b + "\n" +
		"third:\n  pkg.installed:\n    - name: " + c + "\n    - version: '2.0'\n"
	if err := os.WriteFile(filepath.Join(root, "agg.sls"), []byte(sls), 0o644); err != nil {
		t.Fatal(err)
	}
	got := applySLS(t, root, "agg", false, ordered.FromPairs("state_aggregate", true))
	compare(t, "aggregated run", got, map[string]summary{
		"first pkg.installed first": {true, "3 targeted packages were installed/updated.", true},
		"second pkg.installed " + b: {true, "All specified packages are already installed", false},
		"third pkg.installed " + c:  {true, "All specified packages are already installed", false},
	})
	for p, v := range map[string]string{a: "1.0", b: "1.0", c: "2.0"} {
		if s := pkgtest.DpkgStatus(p); s != "install ok installed "+v {
			t.Errorf("%s: dpkg status %q", p, s)
		}
	}
}
