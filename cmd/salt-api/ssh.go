package main

import (
	"log/slog"

	"github.com/brinesalt/brine/internal/config"
	"github.com/brinesalt/brine/netapi"
)

func newSSH(cfg *config.Master, confDir string, ac netapi.Config, log *slog.Logger) netapi.SSHRunner {
	return nil
}
