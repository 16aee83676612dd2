package syndic

import (
	"context"
	"errors"
	"io"
	"log/slog"

	"github.com/brinesalt/brine/internal/daemon"
	"github.com/brinesalt/brine/internal/logging"
	"github.com/brinesalt/brine/internal/sdnotify"
	"github.com/brinesalt/brine/minion"
)

// Main is the salt-syndic command line: -c names the directory of both
// the master and the minion file (syndic_config), the log goes to the
// console and to syndic_log_file. The salt-syndic command and the thin
// binary run as salt-syndic share it. A loop (syndic_master is this
// master) exits 2, as does a changed upper master key.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	confDir, log, code, ok := daemon.Start("salt-syndic", args, stdout, stderr)
	if !ok {
		return code
	}
	c, err := LoadConfig(confDir, log)
	if err != nil {
		log.Error(err.Error())
		return 1
	}
	fh, err := logging.OpenFile(logging.FileOptions{Path: c.LogFile, Level: "warning", Name: "salt.syndic"})
	if err != nil {
		log.Warn("syndic_log_file not opened; logging to the console only", "syndic_log_file", c.LogFile, "error", err.Error())
	} else {
		defer fh.Close()
		log = slog.New(logging.Tee(log.Handler(), fh))
	}
	s, err := New(c, log)
	if err != nil {
		log.Error(err.Error())
		if errors.Is(err, ErrLoop) {
			return 2
		}
		return 1
	}
	if err := sdnotify.Ready(); err != nil {
		log.Warn(err.Error())
	}
	if err := s.Run(ctx); err != nil {
		log.Error(err.Error())
		if errors.Is(err, ErrLoop) || errors.Is(err, minion.ErrMasterKeyChanged) {
			return 2
		}
		return 1
	}
	return 0
}
