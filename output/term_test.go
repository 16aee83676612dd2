package output

import (
	"bytes"
	"io"
	"os"
	"testing"
)

func TestUseColor(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, tc := range []struct {
		name        string
		noC, forceC bool
		cfg         any
		want        bool
	}{
		{"not a terminal", false, false, nil, false},
		{"force", false, true, nil, true},
		{"force beats no-color", true, true, nil, true},
		{"config on", false, false, true, true},
		{"no-color beats config", true, false, true, false},
		{"config not a bool", false, false, "yes", false},
	} {
		for _, w := range []io.Writer{f, &bytes.Buffer{}} {
			if got := UseColor(w, tc.noC, tc.forceC, tc.cfg); got != tc.want {
				t.Errorf("%s (%T): %v, want %v", tc.name, w, got, tc.want)
			}
		}
	}
}
