// Package allmodules links every execution module into a binary: import it for
// its side effect of registering them in modules.Default, and the YAML
// codec that grains files and custom grains need.
package allmodules

import (
	_ "github.com/brinesalt/brine/state/apply"
	_ "github.com/brinesalt/brine/state/coregrains/grainsyaml"
	_ "github.com/brinesalt/brine/state/modules/archive"
	_ "github.com/brinesalt/brine/state/modules/beacons"
	_ "github.com/brinesalt/brine/state/modules/cmd"
	_ "github.com/brinesalt/brine/state/modules/configmod"
	_ "github.com/brinesalt/brine/state/modules/cp"
	_ "github.com/brinesalt/brine/state/modules/environ"
	_ "github.com/brinesalt/brine/state/modules/event"
	_ "github.com/brinesalt/brine/state/modules/file"
	_ "github.com/brinesalt/brine/state/modules/grains"
	_ "github.com/brinesalt/brine/state/modules/match"
	_ "github.com/brinesalt/brine/state/modules/mine"
	_ "github.com/brinesalt/brine/state/modules/publish"
	_ "github.com/brinesalt/brine/state/modules/saltutil"
	_ "github.com/brinesalt/brine/state/modules/schedule"
	_ "github.com/brinesalt/brine/state/modules/sys"
	_ "github.com/brinesalt/brine/state/modules/test"
	_ "github.com/brinesalt/brine/state/pillar/module"
)
