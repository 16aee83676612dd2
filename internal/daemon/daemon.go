// Package daemon holds the command line the Brine daemons share
// (salt-master, and salt-minion whether run as its own command or as the
// promoted thin binary): Salt's -c/--config-dir, -l/--log-level and
// -V/--version.
package daemon

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/brinesalt/brine/internal/config"
	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/logging"
	"github.com/brinesalt/brine/internal/ordered"
)

// Start parses a daemon's arguments (without the program name) and opens
// its console logger. When the daemon must not run — bad flags, or
// --version printed — ok is false and code is the exit code.
func Start(name string, args []string, stdout, stderr io.Writer) (confDir string, log *slog.Logger, code int, ok bool) {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.StringP("config-dir", "c", config.DefaultDir, "configuration directory")
	level := fs.StringP("log-level", "l", "warning", "console log level")
	version := fs.BoolP("version", "V", false, "print the version and exit")
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(stderr, "%s: %s\n", name, err.Error())
		return "", nil, 2, false
	}
	if *version {
		fmt.Fprintf(stdout, "%s (Brine)\n", name)
		return "", nil, 0, false
	}
	log, err := logging.New(stderr, *level)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return "", nil, 2, false
	}
	return *dir, log, 0, true
}

// LogFile adds the log file the daemon's config names (log_file, at
// log_level_logfile, else log_level, else warning; log_fmt_logfile and
// log_datefmt_logfile) to console, under root_dir as Salt's
// apply_master_config/apply_minion_config place it. Without log_file the
// daemon logs to the console only (under systemd, the journal) instead of
// Salt's default /var/log/salt/<name>. A file that cannot be opened is a
// warning and the daemon goes on with the console. closeFile closes what
// was opened.
func LogFile(console *slog.Logger, raw *ordered.Map, rootDir, name string) (log *slog.Logger, closeFile func()) {
	path, _ := raw.Value("log_file").(string)
	if path == "" {
		return console, func() {}
	}
	if !strings.Contains(path, "://") && rootDir != "" && rootDir != "/" && !strings.HasPrefix(path, rootDir) {
		path = filepath.Join(rootDir, path)
	}
	fileLevel, _ := raw.Value("log_level_logfile").(string)
	consoleLevel, _ := raw.Value("log_level").(string)
	level := cmp.Or(fileLevel, consoleLevel, "warning")
	if _, err := logging.ParseLevel(level); err != nil {
		console.Warn("config log_level_logfile: "+err.Error()+"; using warning", "log_file", path)
		level = "warning"
	}
	fo := logging.FileOptions{Path: path, Level: level, Name: "salt." + name}
	fo.Format, _ = raw.Value("log_fmt_logfile").(string)
	fo.DateFormat, _ = raw.Value("log_datefmt_logfile").(string)
	h, err := logging.OpenFile(fo)
	if errors.Is(err, logging.ErrSyslog) {
		console.Warn("log_file names a syslog destination, which Brine does not support; logging to the console only", "log_file", path)
		return console, func() {}
	}
	if err != nil {
		// salt/_logging/impl.py setup_logfile_handler's warning.
		console.Warn("Failed to open log file, do you have permission to write to "+path+"?", logattr.Err, err)
		return console, func() {}
	}
	return slog.New(logging.Tee(console.Handler(), h)), func() { _ = h.Close() }
}
