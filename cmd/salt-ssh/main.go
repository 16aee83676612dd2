// Command salt-ssh runs Salt functions on hosts from a roster over SSH,
// with nothing but sshd and a POSIX shell on the targets. It reads the
// master config, the roster and the flags Salt's salt-ssh reads, and
// prints the same shapes with the same exit codes.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/brinesalt/brine/internal/shutdown"
)

func main() {
	if os.Getenv("GOGC") == "" {
		// A run is short and its garbage small (27 MB peak at 100 hosts):
		// collecting four times less often cut the controller's CPU for a
		// warm test.ping on 100 hosts by about 8% for 4 MB more at peak.
		debug.SetGCPercent(400)
	}
	ctx, stop := shutdown.Context(os.Stderr, "\nExiting gracefully on Ctrl-c; press it again to exit now")
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is salt-ssh without the process around it, so tests can call it.
func run(ctx context.Context, argv []string, stdin io.Reader, stdout, stderr io.Writer) int {
	o, err := parseArgs(argv, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "Usage: salt-ssh [options] '<target>' <function> [arguments]\n\nsalt-ssh: error: %v\n", err)
		return 2 // optparse's usage error status, as Salt exits
	}
	app, err := newApp(ctx, o, stdin, stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "salt-ssh: error: %v\n", err)
		return 1
	}
	defer app.close()
	return app.run(ctx)
}
