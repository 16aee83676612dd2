package coregrains

import (
	"os"
	"os/user"
)

// processIdentity is minion_process.py on Windows: no uid or gid, the
// username as salt.utils.win_functions.get_current_user gives it
// (DOMAIN\user, or SYSTEM for LocalSystem), groupname "" (Salt's
// get_default_group has no groups on Windows).
func processIdentity(g map[string]any) {
	g["username"], g["groupname"] = "", ""
	u, err := user.Current()
	if err != nil {
		return
	}
	g["username"] = u.Username
	if u.Uid == "S-1-5-18" {
		g["username"] = "SYSTEM"
	}
}

// defaultShell is extra.py shell on Windows: %COMSPEC%, else
// C:\Windows\system32\cmd.exe.
func defaultShell() string {
	if sh := os.Getenv("COMSPEC"); sh != "" {
		return sh
	}
	return `C:\Windows\system32\cmd.exe`
}
