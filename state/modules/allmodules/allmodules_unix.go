//go:build !windows

package allmodules

// The modules for Unix systems only, as Salt's __virtual__ loads them
// there only (Windows has win_service, win_system and win_pkg instead).
import (
	_ "github.com/brinesalt/brine/state/modules/cron"
	_ "github.com/brinesalt/brine/state/modules/disk"
	_ "github.com/brinesalt/brine/state/modules/group"
	_ "github.com/brinesalt/brine/state/modules/hosts"
	_ "github.com/brinesalt/brine/state/modules/locale"
	_ "github.com/brinesalt/brine/state/modules/network"
	_ "github.com/brinesalt/brine/state/modules/pkg"
	_ "github.com/brinesalt/brine/state/modules/service"
	_ "github.com/brinesalt/brine/state/modules/status"
	_ "github.com/brinesalt/brine/state/modules/timezone"
	_ "github.com/brinesalt/brine/state/modules/user"
)
