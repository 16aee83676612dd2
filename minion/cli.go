package minion

import (
	"context"
	"errors"
	"io"
	"os"

	"github.com/brinesalt/brine/internal/config"
	"github.com/brinesalt/brine/internal/daemon"
	"github.com/brinesalt/brine/internal/sdnotify"
)

// Main is the salt-minion command line: it parses args (without the
// program name), loads the minion config and runs the minion until ctx
// ends, returning the exit code. The salt-minion command and the thin
// binary promoted to a minion (salt-thin's minion mode) share it, so a
// host set up by minion.bootstrap behaves as salt-minion does.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	confDir, log, code, ok := daemon.Start("salt-minion", args, stdout, stderr)
	if !ok {
		return code
	}
	cfg, err := config.LoadMinion(confDir, log)
	if err != nil {
		log.Error(err.Error())
		return 1
	}
	log, closeLog := daemon.LogFile(log, cfg.Raw, cfg.RootDir, "minion")
	defer closeLog()
	if cfg.ID == "" {
		if h, err := os.Hostname(); err == nil {
			cfg.ID = h
		}
	}
	var m interface{ Run(context.Context) error }
	if IsHot(cfg) {
		m, err = NewHot(Options{Config: cfg, Log: log})
	} else {
		m, err = New(Options{Config: cfg, Log: log})
	}
	if err != nil {
		log.Error(err.Error())
		return 1
	}
	// Ready before the first sign-in, as salt/scripts.py salt_minion
	// notifies: a minion waiting for its key to be accepted has started.
	if err := sdnotify.Ready(); err != nil {
		log.Warn(err.Error())
	}
	if err := m.Run(ctx); err != nil {
		if errors.Is(err, ErrMasterKeyChanged) {
			log.Error("refusing the master: its public key is not the one in minion_master.pub")
			return 2
		}
		log.Error(err.Error())
		return 1
	}
	return 0
}
