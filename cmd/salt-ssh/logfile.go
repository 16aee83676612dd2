package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/brinesalt/brine/internal/config"
	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/logging"
)

// defaultLogFile is Salt's DEFAULT_MASTER_OPTS["ssh_log_file"]: salt-ssh
// logs there, not to the master's log_file (salt/utils/parsers.py
// SaltSSHOptionParser sets _logfile_config_setting_name_ = "ssh_log_file").
const defaultLogFile = "/var/log/salt/ssh"

// loadConfig reads the master config and sets up salt-ssh's logging as
// Salt's LogLevelMixIn does: the console at -l, else the config's
// log_level; the log file at --log-file, else ssh_log_file, at
// --log-file-level, else log_level_logfile, else log_level, in
// log_fmt_logfile and log_datefmt_logfile. What is logged while the
// config is read goes to both once they are known. A log file that cannot
// be opened is a warning, and the run goes on without it. The returned
// handler, when not nil, is the open log file for the caller to close.
func loadConfig(o *options, stderr io.Writer) (*slog.Logger, *config.Master, *logging.FileHandler, error) {
	for _, l := range []string{o.logLevel, o.logFileLvl} {
		if _, err := logging.ParseLevel(l); err != nil {
			return nil, nil, nil, err
		}
	}
	rec := logging.NewRecorder()
	cfg, err := config.LoadMaster(o.configDir, slog.New(rec))
	level := o.logLevel
	if cfg != nil && !o.set["log-level"] {
		if s, ok := cfg.Raw.Value("log_level").(string); ok && s != "" {
			level = s
		}
	}
	console, lerr := logging.New(stderr, level)
	if lerr != nil {
		console, _ = logging.New(stderr, o.logLevel)
		console.Warn("config log_level: " + lerr.Error())
	}
	if err != nil {
		rec.Replay(context.Background(), console.Handler())
		return nil, nil, nil, err
	}
	file := openLogFile(o, cfg, console)
	log := console
	if file != nil {
		log = slog.New(logging.Tee(console.Handler(), file))
	}
	rec.Replay(context.Background(), log.Handler())
	return log, cfg, file, nil
}

// openLogFile opens the log file the options and config name, or
// returns nil after saying why on the console.
func openLogFile(o *options, cfg *config.Master, console *slog.Logger) *logging.FileHandler {
	fo := logging.FileOptions{Path: logFilePath(o, cfg), Level: logFileLevel(o, cfg), Name: "salt-ssh"}
	fo.Format, _ = cfg.Raw.Value("log_fmt_logfile").(string)
	fo.DateFormat, _ = cfg.Raw.Value("log_datefmt_logfile").(string)
	lvl, err := logging.ParseLevel(fo.Level)
	if err != nil {
		console.Warn("config log_level_logfile: "+err.Error()+"; using warning", "file", cfg.File)
		fo.Level = "warning"
	}
	if lvl == logging.LevelQuiet {
		return nil // nothing would be written
	}
	h, err := logging.OpenFile(fo)
	switch {
	case errors.Is(err, logging.ErrSyslog):
		console.Warn("ssh_log_file names a syslog destination, which Brine does not support; no log file is written", "file", fo.Path)
	case err != nil:
		// salt/_logging/impl.py setup_logfile_handler's warning.
		console.Warn("Failed to open log file, do you have permission to write to "+fo.Path+"?", logattr.Err, err)
	}
	if err != nil {
		return nil
	}
	return h
}

// logFilePath is --log-file (a bare name is in the current directory, as
// Salt's _logfile_callback makes it), else ssh_log_file, else the
// default; a configured or default path is placed under root_dir, as
// salt/config/__init__.py apply_master_config does unless it is a syslog
// destination.
func logFilePath(o *options, cfg *config.Master) string {
	if o.logFile != "" {
		if filepath.Dir(o.logFile) == "." && !strings.HasPrefix(o.logFile, "./") {
			return "./" + o.logFile
		}
		return o.logFile
	}
	path := defaultLogFile
	if s, ok := cfg.Raw.Value("ssh_log_file").(string); ok && s != "" {
		path = s
	}
	if strings.Contains(path, "://") {
		return path
	}
	if root := cfg.RootDir; root != "" && root != "/" && !strings.HasPrefix(path, root) {
		path = filepath.Join(root, path)
	}
	return path
}

// logFileLevel is --log-file-level, else log_level_logfile, else the
// config's log_level (not -l: Salt reads it from the config before the
// command line is merged), else warning.
func logFileLevel(o *options, cfg *config.Master) string {
	if o.logFileLvl != "" {
		return o.logFileLvl
	}
	if s, ok := cfg.Raw.Value("log_level_logfile").(string); ok && s != "" {
		return s
	}
	if s, ok := cfg.Raw.Value("log_level").(string); ok && s != "" {
		return s
	}
	return "warning"
}
