package pkgtest

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// UniqueName returns prefix followed by random hex, for test users,
// groups, packages and services that cannot clash with real ones.
func UniqueName(prefix string) string {
	b := make([]byte, 4)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return prefix + hex.EncodeToString(b)
}

// NeedRoot skips the test unless it runs as root with the given tools.
func NeedRoot(t testing.TB, tools ...string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s", tool)
		}
	}
}

// InitScript is a SysV init script installed for a test.
type InitScript struct {
	Name string
	// Log lists the actions the script ran, one a line.
	Log string
	// State exists while the service "runs".
	State string
}

// Actions returns the actions logged so far.
func (s *InitScript) Actions() []string {
	b, _ := os.ReadFile(s.Log)
	return strings.Fields(string(b))
}

// InstallInitScript installs a uniquely named LSB init script into
// /etc/init.d whose "daemon" is a state file, and removes the script and
// its rc links when the test ends. Skips unless this is a root SysV host
// with service and update-rc.d and without a running systemd.
func InstallInitScript(t testing.TB) *InitScript {
	t.Helper()
	return installInitScript(t, UniqueName("brinetest-"))
}

func installInitScript(t testing.TB, name string) *InitScript {
	t.Helper()
	NeedRoot(t, "service", "update-rc.d")
	if _, err := os.Stat("/run/systemd/system"); err == nil {
		t.Skip("systemd is running; the SysV test would not be SysV")
	}
	dir := t.TempDir()
	s := &InitScript{Name: name, Log: filepath.Join(dir, "log"), State: filepath.Join(dir, "running")}
	script := fmt.Sprintf(`#!/bin/sh
### BEGIN INIT INFO
# Provides:          %[1]s
# Required-Start:
# Required-Stop:
# Default-Start:     2 3 4 5
# Default-Stop:      0 1 6
# Short-Description: Brine test service
### END INIT INFO
case "$1" in
start) touch %[2]s; echo start >> %[3]s ;;
stop) rm -f %[2]s; echo stop >> %[3]s ;;
restart) touch %[2]s; echo restart >> %[3]s ;;
reload|force-reload) echo reload >> %[3]s ;;
status) [ -e %[2]s ] ;;
*) echo "Usage: $0 {start|stop|restart|reload|status}"; exit 3 ;;
esac
`, s.Name, s.State, s.Log)
	path := "/etc/init.d/" + s.Name
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		exec.Command("update-rc.d", "-f", s.Name, "remove").Run()
		os.Remove(path)
		links, _ := filepath.Glob("/etc/rc?.d/[SK][0-9][0-9]" + s.Name)
		for _, l := range links {
			os.Remove(l)
		}
	})
	return s
}

// InstallNamedInitScript is InstallInitScript with a given name.
func InstallNamedInitScript(t testing.TB, name string) *InitScript {
	t.Helper()
	return installInitScript(t, name)
}
