package thin

import "runtime"

// uname names a Windows host as Python's platform.uname does: system
// "Windows", machine the processor architecture (AMD64, ARM64).
func uname() (sys, machine string, err error) {
	return "Windows", map[string]string{"amd64": "AMD64", "arm64": "ARM64", "386": "x86"}[runtime.GOARCH], nil
}
