package filestate

import (
	"strconv"
	"testing"
)

// FuzzHumanToBytes reads file.tidied's size strings: no panics, plain
// byte counts pass through, and a K suffix multiplies by 1024.
func FuzzHumanToBytes(f *testing.F) {
	for _, s := range []string{"10", "1K", "1KiB", "1KB", "2.5 GB", "", "x", "9e9y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := humanToBytes(s)
		for _, c := range s {
			if c < '0' || c > '9' {
				return
			}
		}
		n, err := strconv.Atoi(s)
		if err != nil || n > 1<<40 {
			return
		}
		if got != int64(n) {
			t.Fatalf("humanToBytes(%q) = %d", s, got)
		}
		if k := humanToBytes(s + "K"); k != int64(n)*1024 {
			t.Fatalf("humanToBytes(%qK) = %d", s, k)
		}
	})
}
