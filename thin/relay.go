package thin

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"

	"github.com/brinesalt/brine/internal/relay"
)

func init() {
	Register(Command{Name: "relay", Summary: "receive files in chunks from the controller and peers, and serve verified chunks (salt-ssh --relay)", Run: runRelay})
}

// runRelay is the host side of salt-ssh --relay (see internal/relay and
// docs/RELAY.md): the run's key and manifest arrive on stdin, never in
// argv; events go to stdout.
func runRelay(ctx context.Context, inv *Invocation) int {
	fs := flag.NewFlagSet("salt-thin relay", flag.ContinueOnError)
	fs.SetOutput(inv.Stderr)
	dir := fs.String("dir", "", "the content cache, <thin_dir>/files")
	listen := fs.String("listen", "", "host:port to serve peers on (empty: serve none)")
	mode := fs.String("mode", "0600", "mode of the files written")
	maxServe := fs.Int("max-serve", 4, "chunks served at once")
	if err := fs.Parse(inv.Args); err != nil || *dir == "" || fs.NArg() != 0 {
		fmt.Fprintln(inv.Stderr, "usage: salt-thin relay --dir DIR [--listen HOST:PORT] [--mode 0600] [--max-serve N]")
		return ExUsage
	}
	m, err := strconv.ParseUint(*mode, 8, 32)
	if err != nil || m&^0o777 != 0 {
		fmt.Fprintf(inv.Stderr, "salt-thin relay: bad --mode %q\n", *mode)
		return ExUsage
	}
	// Stdout is unbuffered: each event reaches the controller as reported.
	err = relay.RunAgent(ctx, relay.AgentOptions{Dir: *dir, Mode: os.FileMode(m), Listen: *listen, MaxServe: *maxServe}, inv.Stdin, inv.Stdout)
	if err != nil {
		fmt.Fprintf(inv.Stderr, "salt-thin relay: %s\n", err)
		return ExGeneric
	}
	return ExOK
}
