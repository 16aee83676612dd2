// Package shutdown gives every command the same signal handling.
package shutdown

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// ErrInterrupted is the cancel cause after the first Ctrl-C or SIGTERM.
var ErrInterrupted = errors.New("interrupted")

// Context returns a context cancelled (cause ErrInterrupted) by
// the first SIGINT or SIGTERM, so work in flight stops cleanly; a second
// signal exits at once with 130, as k0sctl does. notice, when set, is
// written on the first signal. stop releases the signal handler.
func Context(notice io.Writer, message string) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case <-sigs:
		case <-done:
			return
		}
		if notice != nil && message != "" {
			fmt.Fprintln(notice, message)
		}
		cancel(ErrInterrupted)
		select {
		case <-sigs:
			os.Exit(130)
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel(nil)
	}
}
