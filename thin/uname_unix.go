//go:build !windows

package thin

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// uname is `uname -s` and `uname -m`.
func uname() (sys, machine string, err error) {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "", "", fmt.Errorf("uname: %w", err)
	}
	return unix.ByteSliceToString(u.Sysname[:]), unix.ByteSliceToString(u.Machine[:]), nil
}
