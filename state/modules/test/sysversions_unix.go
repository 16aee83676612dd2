//go:build !windows

package test

import (
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/brinesalt/brine/internal/ordered"
)

// systemVersions fills versions_report's System Versions from uname and
// /etc/os-release (salt/version.py system_information).
func systemVersions(sys *ordered.Map) {
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		sys.Set("dist", distString())
		sys.Set("locale", "utf-8")
		sys.Set("machine", unix.ByteSliceToString(u.Machine[:]))
		sys.Set("release", unix.ByteSliceToString(u.Release[:]))
		sys.Set("system", unix.ByteSliceToString(u.Sysname[:]))
		sys.Set("version", distString())
	}
}

// distString is " ".join(distro id, version, codename) as Salt's
// system_information prints it.
func distString() string {
	b, err := os.ReadFile("/etc/os-release")
	if err != nil {
		return ""
	}
	kv := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			kv[k] = strings.Trim(v, `"'`)
		}
	}
	return strings.TrimSpace(strings.Join([]string{kv["ID"], kv["VERSION_ID"], kv["VERSION_CODENAME"]}, " "))
}
