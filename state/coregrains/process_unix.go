//go:build !windows

package coregrains

import (
	"os"
	"os/user"
	"strconv"
)

// processIdentity is minion_process.py's uid, gid, username and
// groupname.
func processIdentity(g map[string]any) {
	uid, gid := os.Getuid(), os.Getgid()
	g["uid"], g["gid"] = uid, gid
	g["username"], g["groupname"] = "", ""
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
		g["username"] = u.Username
		if grp, err := user.LookupGroupId(u.Gid); err == nil {
			g["groupname"] = grp.Name
		}
	}
}

// defaultShell is extra.py shell: $SHELL, else /bin/sh.
func defaultShell() string {
	if sh := os.Getenv("SHELL"); sh != "" {
		return sh
	}
	return "/bin/sh"
}
