// Command salt-minion runs the Brine minion: it signs in to the master,
// receives jobs over ZeroMQ and returns their results, configured from
// Salt's minion file.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"

	"github.com/brinesalt/brine/internal/config"
	"github.com/brinesalt/brine/internal/logging"
	"github.com/brinesalt/brine/internal/shutdown"
	"github.com/brinesalt/brine/minion"
	_ "github.com/brinesalt/brine/state/modules/all"
	_ "github.com/brinesalt/brine/state/states/all" // state.apply on the minion
)

func main() {
	ctx, stop := shutdown.Context(nil, "")
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("salt-minion", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	confDir := fs.StringP("config-dir", "c", config.DefaultDir, "configuration directory")
	level := fs.StringP("log-level", "l", "warning", "console log level")
	version := fs.BoolP("version", "V", false, "print the version and exit")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *version {
		fmt.Fprintln(stdout, "salt-minion (Brine)")
		return 0
	}
	log, err := logging.New(stderr, *level)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	cfg, err := config.LoadMinion(*confDir, log)
	if err != nil {
		log.Error(err.Error())
		return 1
	}
	if cfg.ID == "" {
		if h, err := os.Hostname(); err == nil {
			cfg.ID = h
		}
	}
	m, err := minion.New(minion.Options{Config: cfg, Log: log})
	if err != nil {
		log.Error(err.Error())
		return 1
	}
	if err := m.Run(ctx); err != nil {
		if errors.Is(err, minion.ErrMasterKeyChanged) {
			log.Error("refusing the master: its public key is not the one in minion_master.pub")
			return 2
		}
		log.Error(err.Error())
		return 1
	}
	return 0
}
