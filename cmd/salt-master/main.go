// Command salt-master runs the Brine master: ZeroMQ publish (4505) and
// request (4506) sockets, key acceptance, the job cache and the event
// bus, configured from Salt's master file.
package main

import (
	"context"
	"io"
	"os"

	"github.com/brinesalt/brine/internal/config"
	"github.com/brinesalt/brine/internal/daemon"
	"github.com/brinesalt/brine/internal/eauth/pam"
	"github.com/brinesalt/brine/internal/shutdown"
	"github.com/brinesalt/brine/master"
	"github.com/brinesalt/brine/orchestrate"
)

func main() {
	ctx, stop := shutdown.Context(nil, "")
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	confDir, log, code, ok := daemon.Start("salt-master", args, stdout, stderr)
	if !ok {
		return code
	}
	cfg, err := config.LoadMaster(confDir, log)
	if err != nil {
		log.Error(err.Error())
		return 1
	}
	log, closeLog := daemon.LogFile(log, cfg.Raw, cfg.RootDir, "master")
	defer closeLog()
	o, err := master.OptionsFromConfig(cfg)
	if err != nil {
		log.Error(err.Error())
		return 1
	}
	// salt/auth/pam.py: the service PAM checks eauth users against.
	svc, _ := cfg.Raw.Value("auth.pam.service").(string)
	o.PAM = pam.New(svc)
	// The orchestration runners live above the executors (they drive
	// salt-ssh too), so the master gets them here.
	o.Runners = orchestrate.Runners(orchestrate.Config{Master: cfg, ConfigDir: confDir, Log: log})
	m, err := master.New(o, log)
	if err != nil {
		log.Error(err.Error())
		return 1
	}
	if err := m.Run(ctx); err != nil {
		log.Error(err.Error())
		return 1
	}
	return 0
}
