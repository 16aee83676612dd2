//go:build !windows

package main

// platformMain: a Unix minion has no mode commands; systemd (or the init
// system) runs it.
func platformMain([]string) (int, bool) { return 0, false }
