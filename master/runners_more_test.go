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
