// Package all links every state module into a binary: import it for its
// side effect of registering them in states.Default.
package all

import (
	_ "github.com/brinesalt/brine/state/states/cmd"
	_ "github.com/brinesalt/brine/state/states/file"
	_ "github.com/brinesalt/brine/state/states/test"
)
