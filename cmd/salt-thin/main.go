// Command salt-thin is Brine's remote runtime: the static binary the
// controller places on a target and runs over SSH (see package thin).
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	_ "github.com/brinesalt/brine/state/modules/all"
	_ "github.com/brinesalt/brine/state/states/all"
	"github.com/brinesalt/brine/thin"
)

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		cancel() // first signal: stop the running job
		<-sigs
		os.Exit(130) // second: give up at once
	}()
	thin.WatchHangup(cancel) // the SSH session went away: stop the job
	code := thin.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	signal.Stop(sigs)
	cancel()
	os.Exit(code)
}
