package config

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
)

func TestWindowsSyspaths(t *testing.T) {
	want := filepath.Join(os.Getenv("ProgramData"), "Salt Project", "Salt")
	legacy := os.Getenv("SystemDrive") + `\salt`
	if _, err := os.Stat(legacy + `\conf`); err == nil {
		want = legacy
	}
	if Syspaths.RootDir != want || DefaultDir != filepath.Join(want, "conf") {
		t.Fatalf("root %q conf %q, want %q", Syspaths.RootDir, DefaultDir, want)
	}
	m := DefaultMinion(DefaultDir)
	if err := m.Apply(ordered.New(), slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		t.Fatal(err)
	} else if m.PKIDir != filepath.Join(want, "conf", "pki", "minion") || m.CacheDir != filepath.Join(want, "var", "cache", "salt", "minion") {
		t.Errorf("pki_dir %q cachedir %q", m.PKIDir, m.CacheDir)
	}
	if err := os.MkdirAll(legacy+`\conf`, 0o755); err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(legacy)
	if got := windowsRootDir(); got != legacy {
		t.Errorf("with %s\\conf present, root = %q", legacy, got)
	}
	if got := prependRoot(want, `D:\keys`); got != `D:\keys` {
		t.Errorf("prependRoot of another drive = %q", got)
	}
}
