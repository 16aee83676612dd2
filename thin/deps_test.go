package thin_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestThinDeps keeps transport code out of the remote binary, as
// tailscale's tstest/deptest does for its binaries, and net/http too:
// every cold host downloads, unpacks and hashes the binary, and net/http
// alone was a quarter of it (internal/httpget does the thin's fetching).
func TestThinDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/brinesalt/brine/cmd/salt-thin").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	banned := []string{"golang.org/x/crypto/ssh", "github.com/pkg/sftp", "net/http"}
	for _, dep := range strings.Split(string(out), "\n") {
		for _, b := range banned {
			if dep == b || strings.HasPrefix(dep, b+"/") {
				t.Errorf("salt-thin depends on %s", dep)
			}
		}
	}
}
