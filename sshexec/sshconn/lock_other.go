//go:build !unix

package sshconn

import "os"

// lockFile is a no-op where flock is unavailable; the in-process mutex
// still serialises writers of one salt-ssh run.
func lockFile(*os.File) error { return nil }

func unlockFile(*os.File) error { return nil }
