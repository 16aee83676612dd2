// Command salt-minion runs the Brine minion: it signs in to the master,
// receives jobs over ZeroMQ and returns their results, configured from
// Salt's minion file.
package main

import (
	"os"

	"github.com/brinesalt/brine/internal/shutdown"
	"github.com/brinesalt/brine/minion"
	_ "github.com/brinesalt/brine/state/modules/allmodules"
	_ "github.com/brinesalt/brine/state/returners/sqlreturners" // --return mysql/pgjsonb, ext_job_cache
	_ "github.com/brinesalt/brine/state/states/allstates"       // state.apply on the minion
)

func main() {
	// On Windows the service and session mode commands, and a start by
	// the Service Control Manager, are handled first (main_windows.go).
	if code, handled := platformMain(os.Args[1:]); handled {
		os.Exit(code)
	}
	ctx, stop := shutdown.Context(nil, "")
	code := minion.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
