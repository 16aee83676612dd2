//go:build !linux

package thin

import "context"

// WatchHangup is a no-op where the pipe cannot be polled for a hang-up.
func WatchHangup(context.CancelFunc) {}
