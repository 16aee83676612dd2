package logging

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestFileHandlerSaltFormat(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log", "salt", "ssh")
	fh, err := OpenFile(FileOptions{Path: path, Level: "debug", Name: "salt-ssh"})
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var console bytes.Buffer
	con, _ := New(&console, "warning")
	log := slog.New(Tee(con.Handler(), fh))
	log.Debug("file only", "host", "web1")
	log.With("host", "web2").Warn("both", "retcode", 3)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// salt/_logging/impl.py DFLT_LOG_FMT_LOGFILE with DFLT_LOG_DATEFMT_LOGFILE.
	re := regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} \[brine\.internal\.logging:\d+ *\]\[DEBUG   \]\[\d+\] file only host=web1\n` +
		`\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} \[brine\.internal\.logging:\d+ *\]\[WARNING \]\[\d+\] both host=web2 retcode=3\n$`)
	if !re.Match(data) {
		t.Errorf("log file:\n%s", data)
	}
	if console.String() != "[WARNING ] both host=web2 retcode=3\n" {
		t.Errorf("console at warning got %q", console.String())
	}
	for p, want := range map[string]os.FileMode{path: 0o640, filepath.Dir(path): 0o750 | os.ModeDir} {
		if st, err := os.Stat(p); err != nil || st.Mode()&^0o022 != want&^0o022 {
			t.Errorf("%s: mode %v, want %v (umask 027, as Salt's verify_log_files)", p, st.Mode(), want)
		}
	}
}

func TestFileHandlerCustomFormat(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ssh.log")
	fh, err := OpenFile(FileOptions{Path: path, Level: "info",
		Format:     "%(levelname)s|%(levelno)d|%(bracketlevel)s|%(module)s|%(funcName)s|%(bogus)s|100%%|%(message)r|%(msecs)03d",
		DateFormat: "%H:%M"})
	if err != nil {
		t.Fatal(err)
	}
	slog.New(fh).Info("hello")
	fh.Close()
	data, _ := os.ReadFile(path)
	re := regexp.MustCompile(`^INFO\|20\|\[INFO    \]\|file_test\|TestFileHandlerCustomFormat\|%\(bogus\)s\|100%\|'hello'\|\d{3}\n$`)
	if !re.Match(data) {
		t.Errorf("log file: %q", data)
	}
}

func TestOpenFileFailures(t *testing.T) {
	dir := t.TempDir()
	notDir := filepath.Join(dir, "file")
	os.WriteFile(notDir, nil, 0o600)
	if _, err := OpenFile(FileOptions{Path: filepath.Join(notDir, "ssh")}); err == nil || !strings.Contains(err.Error(), "open log file") {
		t.Errorf("log file under a regular file: %v", err)
	}
	if _, err := OpenFile(FileOptions{Path: "udp://localhost:514/LOG_USER"}); !errors.Is(err, ErrSyslog) {
		t.Errorf("syslog destination: %v", err)
	}
	if _, err := OpenFile(FileOptions{Path: filepath.Join(dir, "x"), Level: "loud"}); err == nil {
		t.Error("bad level accepted")
	}
}

func TestRecorderReplay(t *testing.T) {
	rec := NewRecorder()
	log := slog.New(rec)
	log.Debug("too low")
	log.With("file", "/etc/salt/master").Warn("kept")
	var b bytes.Buffer
	h, _ := New(&b, "info")
	rec.Replay(context.Background(), h.Handler())
	if b.String() != "[WARNING ] kept file=/etc/salt/master\n" {
		t.Errorf("replayed %q", b.String())
	}
}

// FuzzPyFormat: log_fmt_logfile comes from the config; no format makes
// rendering panic.
func FuzzPyFormat(f *testing.F) {
	for _, s := range []string{DefaultFileFormat, "%(msecs)03d %%", "%(", "%()s", "%(x)", "%(levelno)#-+ 0.3x", "%(message)c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var r slog.Record
		r.Message = "m"
		parsePyFormat(s, "%Y", "prog").render(r, "m")
	})
}
