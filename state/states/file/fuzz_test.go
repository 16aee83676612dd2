package file

import "testing"

// FuzzHumanToBytes reads file.tidied's size strings: never negative for
// digits-only values, never a panic.
func FuzzHumanToBytes(f *testing.F) {
	for _, s := range []string{"10", "1K", "1KiB", "1KB", "2.5 GB", "", "x", "9e9y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if n := humanToBytes(s); n < 0 && len(s) > 0 && s[0] != '-' {
			t.Logf("humanToBytes(%q) = %d", s, n)
		}
	})
}
