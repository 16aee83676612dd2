package pkg

import (
	"context"
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/testsupport/pkgtest"
)

// FuzzVersionCompare checks that both version orders are antisymmetric
// and reflexive for any input.
func FuzzVersionCompare(f *testing.F) {
	for _, s := range [][2]string{{"1.0-1", "1.0-2"}, {"1:2.3~rc1", "2.3"}, {"2.34-60.el9_2", "2.34-60.el9"}, {"1.0^git1", "1.0"}, {"", "0"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		for name, cmp := range map[string]func(a, b string) int{"debian": DebianCompare, "rpm": RPMCompare} {
			if cmp(a, a) != 0 {
				t.Errorf("%s: %q != itself", name, a)
			}
			if x, y := cmp(a, b), cmp(b, a); x != -y {
				t.Errorf("%s: cmp(%q, %q) = %d but cmp(%q, %q) = %d", name, a, b, x, b, a, y)
			}
		}
	})
}

// FuzzListParsers feeds arbitrary tool output to the three list_pkgs
// parsers; they must not fail or panic.
func FuzzListParsers(f *testing.F) {
	f.Add(dpkgBefore)
	f.Add(rpmBefore)
	f.Add("musl-1.2.4-r2\nbad\n-\n")
	f.Add("install ok installed\n_|-_|-_|-_|-_|-_|-\n")
	f.Fuzz(func(t *testing.T, out string) {
		for _, p := range []struct {
			grains *ordered.Map
			cmd    string
		}{{debianGrains(), "dpkg-query *"}, {rockyGrains(), "rpm -qa *"}, {alpineGrains(), "apk info -v"}} {
			fake := (&pkgtest.Fake{}).On(p.cmd, 0, out)
			env := newEnv(p.grains, fake, "dnf")
			if _, err := env.Run(context.Background(), "pkg.list_pkgs", nil, nil); err != nil {
				t.Errorf("%s: %v", p.cmd, err)
			}
		}
	})
}
