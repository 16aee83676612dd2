// Command salt-thin-core is the core flavor of Brine's remote runtime
// (see package thin/core): the thin runtime with only the test, cmd and
// grains execution modules, which salt-ssh sends on first contact for
// those functions because a host unpacks and hashes it three times
// faster than the full cmd/salt-thin.
package main

import (
	"context"
	"os"

	"github.com/brinesalt/brine/internal/shutdown"
	"github.com/brinesalt/brine/thin"
	_ "github.com/brinesalt/brine/thin/core"
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
