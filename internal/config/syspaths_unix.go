//go:build !windows

package config

// DefaultDir is Salt's configuration directory.
const DefaultDir = "/etc/salt"

// Syspaths are Salt's Unix locations.
var Syspaths = SysPaths{
	RootDir:        "/",
	ConfigDir:      DefaultDir,
	MinionPKIDir:   "/etc/salt/pki/minion",
	MinionCacheDir: "/var/cache/salt/minion",
	MinionSockDir:  "/var/run/salt/minion",
	SrvRootDir:     "/srv",
	LogsDir:        "/var/log/salt",
}
