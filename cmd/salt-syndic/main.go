// Command salt-syndic runs the Brine syndic on a lower master's host: a
// minion of the upper master (syndic_master) that relays its jobs to
// this master and forwards the returns and events upward (package
// syndic), configured from Salt's master and minion files.
package main

import (
	"os"

	"github.com/brinesalt/brine/internal/shutdown"
	"github.com/brinesalt/brine/syndic"
)

func main() {
	ctx, stop := shutdown.Context(nil, "")
	code := syndic.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
