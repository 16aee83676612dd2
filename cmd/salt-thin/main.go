// Command salt-thin is Brine's remote runtime: the static binary the
// controller places on a target and runs over SSH (see package thin).
package main

import (
	"context"
	"os"

	"github.com/brinesalt/brine/internal/shutdown"
	_ "github.com/brinesalt/brine/state/modules/all"
	_ "github.com/brinesalt/brine/state/states/all"
	"github.com/brinesalt/brine/thin"
)

func main() {
	sig, stop := shutdown.Context(nil, "") // first signal stops the job, second exits 130
	ctx, cancel := context.WithCancel(sig)
	thin.WatchHangup(cancel) // the SSH session went away: stop the job
	code := thin.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	cancel()
	stop()
	os.Exit(code)
}
