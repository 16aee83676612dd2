package master

import "testing"

// TestCompareVersions checks the SaltStackVersion ordering
// manage.versions relies on.
func TestCompareVersions(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"3006.19", "3006.19", 0},
		{"3005.1", "3006.19", -1},
		{"3006.9", "3006.19", -1},
		{"3007.0", "3006.19", 1},
		{"3006", "3006.0", 0},
		{"3006.0rc1", "3006.0", -1},
		{"3006.0rc2", "3006.0rc1", 1},
		{"2019.2.8", "3006.19", -1},
		{"3006.19+12.gabc", "3006.19", 0},
	} {
		if got := CompareVersions(tc.a, tc.b); got != tc.want {
			t.Errorf("CompareVersions(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

// FuzzCompareVersions feeds manage.versions' parser the version strings
// minions send: it never panics, a version equals itself and the order
// is antisymmetric.
func FuzzCompareVersions(f *testing.F) {
	for _, s := range []string{"3006.19", "3006.0rc1", "2019.2.8", "v3007.1+3.g1234", "", "rc", "1..2", "99999999999999999999.1"} {
		f.Add(s, "3006.19")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if CompareVersions(a, a) != 0 {
			t.Fatalf("%q != itself", a)
		}
		if x, y := CompareVersions(a, b), CompareVersions(b, a); x != -y {
			t.Fatalf("compare(%q, %q) = %d but compare(%q, %q) = %d", a, b, x, b, a, y)
		}
	})
}
