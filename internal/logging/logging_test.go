package logging

import (
	"bytes"
	"strings"
	"testing"
)

func TestLevelsAndFormat(t *testing.T) {
	var b bytes.Buffer
	log, err := New(&b, "info")
	if err != nil {
		t.Fatal(err)
	}
	log.Debug("hidden")
	log.With("host", "web1").Warn("sudo refused", "code", 1)
	log.Error("No matching targets found in roster.")
	want := "[WARNING ] sudo refused host=web1 code=1\n[ERROR   ] No matching targets found in roster.\n"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
	for name, ok := range map[string]bool{"garbage": true, "quiet": true, "warn": true, "": true, "loud": false} {
		if _, err := ParseLevel(name); (err == nil) != ok {
			t.Errorf("ParseLevel(%q) error = %v", name, err)
		}
	}
	if _, err := New(&b, "loud"); err == nil || !strings.Contains(err.Error(), "unknown log level") {
		t.Errorf("bad level accepted: %v", err)
	}
}
