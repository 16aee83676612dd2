package thin

import (
	"errors"
	"os"
	"os/exec"
)

// openPTY: Windows has no Unix pseudo-terminals, and no sudo to give
// one to; salt-thin sudo --tty fails with this error there.
func openPTY() (ptmx, pts *os.File, err error) {
	return nil, nil, errors.New("no pseudo-terminals on Windows")
}

// setCtty is never reached on Windows (openPTY fails first).
func setCtty(*exec.Cmd) {}
