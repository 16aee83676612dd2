package config

// SysPaths are Salt's install locations (salt/syspaths.py) the minion
// defaults are made of. They differ by operating system: see
// syspaths_unix.go and syspaths_windows.go.
type SysPaths struct {
	RootDir        string
	ConfigDir      string
	MinionPKIDir   string
	MinionCacheDir string
	MinionSockDir  string
	SrvRootDir     string
	LogsDir        string
}
