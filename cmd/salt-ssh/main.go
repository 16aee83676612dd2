// Command salt-ssh runs Salt functions on hosts from a roster over SSH,
// with nothing but sshd and a POSIX shell on the targets. It reads the
// master config, the roster and the flags Salt's salt-ssh reads, and
// prints the same shapes with the same exit codes.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := interruptContext()
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// errInterrupted is the cause recorded when the user presses Ctrl-C.
var errInterrupted = errors.New("interrupted")

// interruptContext cancels on the first SIGINT or SIGTERM so hosts in
// flight stop cleanly, and exits 130 on the second, as k0sctl does.
func interruptContext() (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		n := 0
		for range sig {
			n++
			if n == 1 {
				fmt.Fprintln(os.Stderr, "\nExiting gracefully on Ctrl-c; press it again to exit now")
				cancel(errInterrupted)
				continue
			}
			os.Exit(130)
		}
	}()
	return ctx, func() { signal.Stop(sig); cancel(nil) }
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
