package deptest

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestLinuxLinksNoWindowsCode: the Linux thin binary and minion link no
// Windows package (x/sys/windows and the Windows-only Brine packages),
// and the Windows minion builds from the same tree with them.
func TestLinuxLinksNoWindowsCode(t *testing.T) {
	windowsOnly := []string{"golang.org/x/sys/windows", module + "/minion/winservice", module + "/state/modules/reg",
		module + "/state/modules/winservice", module + "/state/modules/winsystem", module + "/state/states/regstate"}
	deps := func(goos string, cmds ...string) string {
		args := []string{"list", "-deps"}
		for _, c := range cmds {
			args = append(args, module+"/cmd/"+c)
		}
		cmd := exec.Command("go", args...)
		cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH=amd64", "CGO_ENABLED=0")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("GOOS=%s go list: %v", goos, err)
		}
		return "\n" + string(out)
	}
	linux := deps("linux", "salt-thin", "salt-thin-core", "salt-minion", "salt-call")
	win := deps("windows", "salt-minion", "salt-call")
	for _, p := range windowsOnly {
		if strings.Contains(linux, "\n"+p+"\n") {
			t.Errorf("the Linux binaries link %s", p)
		}
		if !strings.Contains(win, "\n"+p+"\n") {
			t.Errorf("the Windows minion does not link %s", p)
		}
	}
}
