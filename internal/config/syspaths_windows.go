package config

import (
	"os"
	"path/filepath"

	"golang.org/x/sys/windows/registry"
)

// Syspaths are Salt 3006's Windows locations under ROOT_DIR
// (salt/syspaths.py _get_windows_root_dir): the root_dir value of
// HKLM\SOFTWARE\Salt Project\salt when the installer set one, else the
// legacy %SystemDrive%\salt where its conf directory exists, else
// %ProgramData%\Salt Project\Salt.
var Syspaths = windowsSyspaths(windowsRootDir())

// DefaultDir is the configuration directory, ROOT_DIR\conf.
var DefaultDir = Syspaths.ConfigDir

func windowsSyspaths(root string) SysPaths {
	cache := filepath.Join(root, "var", "cache", "salt")
	return SysPaths{
		RootDir:        root,
		ConfigDir:      filepath.Join(root, "conf"),
		MinionPKIDir:   filepath.Join(root, "conf", "pki", "minion"),
		MinionCacheDir: filepath.Join(cache, "minion"),
		MinionSockDir:  filepath.Join(root, "var", "run", "salt", "minion"),
		SrvRootDir:     filepath.Join(root, "srv"),
		LogsDir:        filepath.Join(root, "var", "log", "salt"),
	}
}

func windowsRootDir() string {
	if k, err := registry.OpenKey(registry.LOCAL_MACHINE, `SOFTWARE\Salt Project\salt`, registry.QUERY_VALUE); err == nil {
		v, _, err := k.GetStringValue("root_dir")
		k.Close()
		if err == nil && v != "" {
			return os.ExpandEnv(v)
		}
	}
	drive := os.Getenv("SystemDrive")
	if drive == "" {
		drive = "C:"
	}
	old := drive + `\salt\conf`
	if st, err := os.Stat(old); err == nil && st.IsDir() {
		return drive + `\salt`
	}
	pd := os.Getenv("ProgramData")
	if pd == "" {
		pd = drive + `\ProgramData`
	}
	return filepath.Join(pd, "Salt Project", "Salt")
}
