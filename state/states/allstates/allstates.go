// Package allstates links every state module into a binary: import it for its
// side effect of registering them in states.Default.
package allstates

import (
	_ "github.com/brinesalt/brine/state/states/cmdstate"
	_ "github.com/brinesalt/brine/state/states/filestate"
	_ "github.com/brinesalt/brine/state/states/modulerun"
	_ "github.com/brinesalt/brine/state/states/servicestate"
	_ "github.com/brinesalt/brine/state/states/teststate"
)
