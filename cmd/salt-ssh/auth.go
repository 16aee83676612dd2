package main

import (
	"fmt"
	"os"

	"golang.org/x/term"
)

// passwordReader reads a password without echo after showing prompt.
type passwordReader func(prompt string) (string, error)

// askPassword fills o.passwd for --askpass, once for the whole run (Salt
// asks with getpass.getpass before connecting anywhere). An explicit
// --passwd wins.
func askPassword(o *options, read passwordReader) error {
	if !o.askpass || o.passwd != "" {
		return nil
	}
	pw, err := read("Password: ")
	if err != nil {
		return fmt.Errorf("--askpass: %w", err)
	}
	o.passwd = pw
	return nil
}

// ttyPassword reads from the controlling terminal (/dev/tty) with echo
// off, so it works when stdin is a pipe and never shows the password.
func ttyPassword(prompt string) (string, error) {
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return "", fmt.Errorf("open terminal: %w", err)
	}
	defer tty.Close()
	fmt.Fprint(tty, prompt)
	pw, err := term.ReadPassword(int(tty.Fd()))
	fmt.Fprintln(tty)
	if err != nil {
		return "", fmt.Errorf("read password: %w", err)
	}
	return string(pw), nil
}

func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }
