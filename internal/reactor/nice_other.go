//go:build !linux

package reactor

import "errors"

// lowerPriority is Linux only: elsewhere the nice value belongs to the
// process, which the reactor shares with the daemon.
func lowerPriority(int) error {
	return errors.New("reactor_niceness needs per-thread nice values (Linux); the reactor shares the daemon's process here")
}
