//go:build !windows

// Command winexec is the `go test -exec` wrapper for Windows test
// binaries: `GOOS=windows go test -exec winexec ./pkg` runs each
// pkg.test.exe under Wine in a throwaway prefix (internal/testsupport/winetest)
// and exits with its exit code. The Makefile's wintest target uses it.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"

	"github.com/brinesalt/brine/internal/shutdown"
	"github.com/brinesalt/brine/internal/testsupport/winetest"
)

func main() { os.Exit(run(os.Args[1:])) }

func run(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: winexec program.exe [args...]")
		return 2
	}
	ctx, stop := shutdown.Context(nil, "")
	defer stop()
	dir, err := os.MkdirTemp("", "winexec-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "winexec:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	w, err := winetest.Start(ctx, dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "winexec:", err)
		return 1
	}
	defer w.Close()
	cmd := w.Command(ctx, args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	fmt.Fprintln(os.Stderr, "winexec:", err)
	return 1
}
