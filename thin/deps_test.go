package thin_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestThinDeps keeps transport code out of the remote binaries, as
// tailscale's tstest/deptest does for its binaries, and net/http too:
// every cold host downloads, unpacks and hashes the binary, and net/http
// alone was a quarter of it (internal/httpget does the thin's fetching).
// The core flavor, sent on first contact, links no TLS, no file client,
// no template engine, no state system, no minion and no YAML parser
// either (a grains file sends the host the full thin), nor a database
// driver: each would put
// megabytes back on every cold host.
func TestThinDeps(t *testing.T) {
	transport := []string{"golang.org/x/crypto/ssh", "github.com/pkg/sftp", "net/http"}
	brine := "github.com/brinesalt/brine/"
	for _, tc := range []struct {
		pkg    string
		banned []string
	}{
		{brine + "cmd/salt-thin", transport},
		{brine + "cmd/salt-thin-core", append([]string{"crypto/tls", "crypto/x509",
			brine + "state/jinja", brine + "state/modules/allmodules", brine + "state/modules/cp",
			brine + "state/modules/file", brine + "state/apply",
			brine + "state/modules/sys", brine + "state/states", brine + "state/compile", brine + "state/render", brine + "state/run", brine + "state/pillar",
			brine + "state/fileclient", brine + "minion", brine + "internal/httpget",
			brine + "internal/saltyaml", brine + "state/coregrains/grainsyaml", "go.yaml.in/yaml", "gopkg.in/yaml.v3",
			// The database returners belong to the minion and the full thin.
			"database/sql", "github.com/go-sql-driver/mysql", "github.com/jackc/pgx"}, transport...)},
	} {
		t.Run(tc.pkg, func(t *testing.T) {
			out, err := exec.Command("go", "list", "-deps", tc.pkg).CombinedOutput()
			if err != nil {
				t.Fatalf("go list: %v\n%s", err, out)
			}
			for _, dep := range strings.Split(string(out), "\n") {
				for _, b := range tc.banned {
					if dep == b || strings.HasPrefix(dep, b+"/") {
						t.Errorf("%s depends on %s", tc.pkg, dep)
					}
				}
			}
		})
	}
}
