package test

import (
	"fmt"
	"runtime"

	"golang.org/x/sys/windows"

	"github.com/brinesalt/brine/internal/ordered"
)

// systemVersions fills versions_report's System Versions as
// salt/version.py system_information does on Windows: no dist, release
// platform.release() (the major version), version the win32_ver()
// triple joined by spaces, machine the processor architecture.
func systemVersions(sys *ordered.Map) {
	v := windows.RtlGetVersion()
	machine := map[string]string{"amd64": "AMD64", "arm64": "ARM64", "386": "x86"}[runtime.GOARCH]
	sys.Set("dist", "")
	sys.Set("locale", "utf-8")
	sys.Set("machine", machine)
	sys.Set("release", fmt.Sprint(v.MajorVersion))
	sys.Set("system", "Windows")
	sys.Set("version", fmt.Sprintf("%d %d.%d.%d SP%d Multiprocessor Free", v.MajorVersion,
		v.MajorVersion, v.MinorVersion, v.BuildNumber, v.ServicePackMajor))
}
