// Command salt-master runs the Brine master: ZeroMQ publish (4505) and
// request (4506) sockets, key acceptance, the job cache and the event
// bus, configured from Salt's master file.
package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"

	"github.com/brinesalt/brine/internal/config"
	"github.com/brinesalt/brine/internal/logging"
	"github.com/brinesalt/brine/internal/shutdown"
	"github.com/brinesalt/brine/master"
)

func main() {
	ctx, stop := shutdown.Context(nil, "")
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("salt-master", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	confDir := fs.StringP("config-dir", "c", config.DefaultDir, "configuration directory")
	level := fs.StringP("log-level", "l", "warning", "console log level")
	version := fs.BoolP("version", "V", false, "print the version and exit")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *version {
		fmt.Fprintln(stdout, "salt-master (Brine)")
		return 0
	}
	log, err := logging.New(stderr, *level)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	cfg, err := config.LoadMaster(*confDir, log)
	if err != nil {
		log.Error(err.Error())
		return 1
	}
	o, err := master.OptionsFromConfig(cfg)
	if err != nil {
		log.Error(err.Error())
		return 1
	}
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
