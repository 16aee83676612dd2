// Command salt-api serves Salt's REST API (rest_cherrypy) for the local
// Brine master: it reads the master config's rest_cherrypy section,
// talks to the master over its local socket, and stops (exit 1) when
// the master goes away.
package main

import (
	"context"
	"errors"
	"io"
	"os"

	"github.com/brinesalt/brine/internal/config"
	"github.com/brinesalt/brine/internal/daemon"
	"github.com/brinesalt/brine/internal/logattr"
	"github.com/brinesalt/brine/internal/shutdown"
	"github.com/brinesalt/brine/master"
	"github.com/brinesalt/brine/netapi"
)

func main() {
	ctx, stop := shutdown.Context(nil, "")
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	confDir, log, code, ok := daemon.Start("salt-api", args, stdout, stderr)
	if !ok {
		return code
	}
	cfg, err := config.LoadMaster(confDir, log)
	if err != nil {
		log.Error(err.Error())
		return 1
	}
	mo, err := master.OptionsFromConfig(cfg)
	if err != nil {
		log.Error(err.Error())
		return 1
	}
	ac, warnings, err := netapi.ParseConfig(cfg.Raw)
	for _, w := range warnings {
		log.Warn(w)
	}
	if err != nil {
		log.Error(err.Error())
		return 1
	}
	srv, err := netapi.New(netapi.Options{Config: ac, Socket: mo.LocalSocket(), Timeout: mo.Timeout,
		GatherJobTimeout: mo.GatherJobTimeout, MasterOpts: cfg.Raw, Log: log, MasterConfig: cfg, ConfigDir: confDir})
	if err != nil {
		log.Error(err.Error())
		return 1
	}
	log.Info("The salt-api is starting up")
	if err := srv.Run(ctx); err != nil {
		if errors.Is(err, netapi.ErrMasterLost) {
			log.Error("the salt master went away; salt-api is shutting down", logattr.Err, err)
		} else {
			log.Error("salt-api stopped", logattr.Err, err)
		}
		return 1
	}
	log.Info("The salt-api is shutdown.")
	return 0
}
