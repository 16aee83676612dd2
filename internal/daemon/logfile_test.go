package daemon

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/brinesalt/brine/internal/config"
	"github.com/brinesalt/brine/internal/logging"
)

// TestLogFile: a daemon's log_file gets what the console gets at its own
// level, under root_dir; without log_file nothing is written anywhere but
// the console; a file that cannot be opened is a warning.
func TestLogFile(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "conf")
	if err := os.MkdirAll(conf, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(body string) *config.Minion {
		t.Helper()
		if err := os.WriteFile(filepath.Join(conf, "minion"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, err := config.LoadMinion(conf, nil)
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	var console bytes.Buffer
	clog, _ := logging.New(&console, "warning")

	cfg := write("id: m1\n")
	if log, _ := LogFile(clog, cfg.Raw, cfg.RootDir, "minion"); log != clog {
		t.Fatal("a config without log_file got a log file")
	}

	cfg = write("id: m1\nroot_dir: " + dir + "\nlog_file: /log/minion\nlog_level_logfile: info\n")
	log, closeLog := LogFile(clog, cfg.Raw, cfg.RootDir, "minion")
	log.Info("to the file only")
	log.Warn("to both")
	closeLog()
	b, err := os.ReadFile(filepath.Join(dir, "log", "minion"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "to the file only") || !strings.Contains(string(b), "to both") {
		t.Errorf("log file holds %q", b)
	}
	if strings.Contains(console.String(), "to the file only") || !strings.Contains(console.String(), "to both") {
		t.Errorf("console holds %q", console.String())
	}

	console.Reset()
	cfg = write("id: m1\nlog_file: " + filepath.Join(dir, "minion-file") + "/x/minion\n")
	if err := os.WriteFile(filepath.Join(dir, "minion-file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if log, _ := LogFile(clog, cfg.Raw, cfg.RootDir, "minion"); log != clog || !strings.Contains(console.String(), "Failed to open log file") {
		t.Errorf("an unopenable log file: console %q", console.String())
	}
}
