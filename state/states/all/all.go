// Package all links every state module into a binary: import it for its
// side effect of registering them in states.Default.
package all

import (
	_ "github.com/brinesalt/brine/state/states/cmd"
	_ "github.com/brinesalt/brine/state/states/file"
	_ "github.com/brinesalt/brine/state/states/group"
	_ "github.com/brinesalt/brine/state/states/module"
	_ "github.com/brinesalt/brine/state/states/pkg"
	_ "github.com/brinesalt/brine/state/states/service"
	_ "github.com/brinesalt/brine/state/states/test"
	_ "github.com/brinesalt/brine/state/states/user"
)
