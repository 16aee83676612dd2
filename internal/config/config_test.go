package config

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadMasterWithIncludes(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "master"), `
ssh_max_procs: 50
ssh_user: deploy
root_dir: /srv/brine
file_roots:
  base:
    - /srv/salt
    - /srv/formulas
roster_defaults:
  sudo: True
some_future_option: 1
`)
	writeFile(t, filepath.Join(dir, "master.d", "10-ssh.conf"), "ssh_timeout: 5\nssh_max_procs: 75\n")
	var logs bytes.Buffer
	m, err := LoadMaster(dir, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if m.SSHMaxProcs != 75 || m.SSHUser != "deploy" || m.SSHTimeout != 5*time.Second {
		t.Errorf("got procs=%d user=%s timeout=%s", m.SSHMaxProcs, m.SSHUser, m.SSHTimeout)
	}
	if diff := cmp.Diff([]string{"/srv/salt", "/srv/formulas"}, m.FileRoots["base"]); diff != "" {
		t.Error(diff)
	}
	if m.PKIDir != "/srv/brine/etc/salt/pki/master" {
		t.Errorf("pki_dir not under root_dir: %s", m.PKIDir)
	}
	if m.RosterDefaults.Value("sudo") != true {
		t.Errorf("roster_defaults = %v", m.RosterDefaults)
	}
	if !strings.Contains(logs.String(), "some_future_option") {
		t.Errorf("unknown option not warned about: %s", logs.String())
	}
}

func TestLoadMasterDefaultsWhenMissing(t *testing.T) {
	m, err := LoadMaster(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.SSHMaxProcs != 25 || m.SSHUser != "root" || m.PKIDir != "/etc/salt/pki/master" {
		t.Errorf("defaults wrong: %+v", m)
	}
}

func TestLoadMasterErrorsNameFile(t *testing.T) {
	for name, body := range map[string]string{
		"bad yaml":  "ssh_user: root\n\tssh_port: 22\n",
		"bad type":  "ssh_max_procs: many\n",
		"not a map": "- a\n- b\n",
		"bad roots": "file_roots: /srv/salt\n",
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "master"), body)
			_, err := LoadMaster(dir, nil)
			if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "master")) {
				t.Fatalf("err = %v, want one naming the file", err)
			}
		})
	}
}
