package allmodules

// The Windows modules (Salt's win_* modules under their virtual names).
// pkg (win_pkg over winrepo) is not supported: pkg.* is "not
// available" on a Windows minion (docs/WINDOWS.md).
import (
	_ "github.com/brinesalt/brine/state/modules/reg"
	_ "github.com/brinesalt/brine/state/modules/winservice"
	_ "github.com/brinesalt/brine/state/modules/winsystem"
)
