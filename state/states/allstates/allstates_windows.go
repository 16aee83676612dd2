package allstates

// The Windows state modules.
import (
	_ "github.com/brinesalt/brine/state/states/regstate"
)
