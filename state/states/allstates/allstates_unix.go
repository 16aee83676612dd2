//go:build !windows

package allstates

// The state modules over Unix-only execution modules.
import (
	_ "github.com/brinesalt/brine/state/states/groupstate"
	_ "github.com/brinesalt/brine/state/states/pkgstate"
	_ "github.com/brinesalt/brine/state/states/userstate"
)
