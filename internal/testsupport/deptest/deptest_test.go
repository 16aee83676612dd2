// Package deptest enforces the direction of dependencies (STYLE.md):
// state/ is pure domain and imports no transport; the thin binary, which
// runs on every target, links neither the SSH client nor SFTP; nothing
// imports cmd/. Modelled on tailscale's tstest/deptest.
package deptest

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/brinesalt/brine"

type pkg struct {
	ImportPath string
	Deps       []string
	Imports    []string
}

func list(t *testing.T, patterns ...string) []pkg {
	t.Helper()
	out, err := exec.Command("go", append([]string{"list", "-e", "-json"}, patterns...)...).Output()
	if err != nil {
		t.Fatalf("go list %v: %v", patterns, err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	var pkgs []pkg
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func TestForbiddenDependencies(t *testing.T) {
	// The transports salt-ssh and the daemons speak. (net/http is allowed:
	// cp.get_url and file.managed fetch http sources as Salt's do.)
	transports := []string{"golang.org/x/crypto/ssh", "github.com/pkg/sftp", "github.com/go-zeromq/zmq4"}
	libpam := []string{"github.com/msteinert/pam", module + "/internal/eauth/pam"}
	rules := []struct {
		pattern   string
		forbidden []string
	}{
		{module + "/state/...", transports},
		{module + "/thin/...", transports},
		{module + "/cmd/salt-thin", transports[:2]},
		// libpam (cgo) is for salt-master alone: the thin binaries and
		// the minion stay static and pure Go.
		{module + "/cmd/salt-thin", libpam},
		{module + "/cmd/salt-thin-core", libpam},
		{module + "/minion/...", libpam},
		{module + "/thin/...", libpam},
	}
	for _, r := range rules {
		for _, p := range list(t, r.pattern) {
			for _, d := range p.Deps {
				for _, f := range r.forbidden {
					if d == f || strings.HasPrefix(d, f+"/") {
						t.Errorf("%s depends on %s", p.ImportPath, d)
					}
				}
			}
		}
	}
}

func TestNothingImportsCmd(t *testing.T) {
	for _, p := range list(t, module+"/...") {
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, module+"/cmd/") {
				t.Errorf("%s imports %s", p.ImportPath, imp)
			}
		}
	}
}

// TestThinIsPureGo: the thin binary is also the promoted minion
// (salt-thin minion, installed as salt-minion by minion.bootstrap), so it
// links the ZeroMQ minion; it must still build static and pure Go, so no
// package outside the standard library it depends on may use cgo (a
// libzmq binding such as goczmq belongs on the master only).
func TestThinIsPureGo(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if and .CgoFiles (not .Standard)}}{{.ImportPath}}{{end}}",
		module+"/cmd/salt-thin").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	if s := strings.TrimSpace(string(out)); s != "" {
		t.Errorf("cmd/salt-thin depends on cgo packages:\n%s", s)
	}
}
