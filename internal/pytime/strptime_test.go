package pytime

import (
	"testing"
	"time"
)

func TestStrptime(t *testing.T) {
	for _, tc := range []struct {
		value, format string
		want          time.Time
		bad           bool
	}{
		{"2026-12-02T14:05:09", "%Y-%m-%dT%H:%M:%S", time.Date(2026, 12, 2, 14, 5, 9, 0, time.Local), false},
		{"02 Dec 26 02:05PM", "%d %b %y %I:%M%p", time.Date(2026, 12, 2, 14, 5, 0, 0, time.Local), false},
		{"2026-12-02", "%Y-%m-%dT%H:%M:%S", time.Time{}, true},
		{"2026", "%Q", time.Time{}, true},
	} {
		got, err := Strptime(tc.value, tc.format)
		if (err != nil) != tc.bad || (!tc.bad && !got.Equal(tc.want)) {
			t.Errorf("Strptime(%q, %q) = %v, %v", tc.value, tc.format, got, err)
		}
	}
}

func FuzzStrptime(f *testing.F) {
	f.Add("2026-12-02T14:05:09", "%Y-%m-%dT%H:%M:%S")
	f.Add("x", "%")
	f.Fuzz(func(t *testing.T, v, format string) {
		_, _ = Strptime(v, format)
	})
}
