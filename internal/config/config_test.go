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

// The warning names exactly the options nothing reads: the ones the old
// hand-kept list claimed (ssh_use_home_key, ssh_minion_opts,
// allow_undefined) and not the ones the master reads (sign_pub_messages,
// request_server_ttl, keysize, autosign_grains_dir,
// permissive_pki_access), which now reach their typed fields, nor
// rosters, which salt-api's ssh client reads.
func TestMasterWarnsExactlyTheUnreadOptions(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "master"), `
ssh_use_home_key: True
ssh_minion_opts: {log_level: debug}
rosters: [/etc/salt/rosters]
allow_undefined: True
sign_pub_messages: False
request_server_ttl: 30
keysize: 4096
autosign_grains_dir: /etc/salt/autosign_grains
permissive_pki_access: True
`)
	var logs bytes.Buffer
	m, err := LoadMaster(dir, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	want := `options="ssh_use_home_key, ssh_minion_opts, allow_undefined"`
	if !strings.Contains(logs.String(), want) {
		t.Errorf("warning = %s, want %s", logs.String(), want)
	}
	if m.SignPubMessages || m.RequestServerTTL != 30*time.Second || m.KeySize != 4096 ||
		m.AutosignGrainsDir != "/etc/salt/autosign_grains" || !m.PermissivePKIAccess {
		t.Errorf("typed fields not set: %+v", m)
	}
}

func TestMinionWarnsExactlyTheUnreadOptions(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "minion"), "master: [m1, m2]\nmultiprocessing: False\nipc_mode: tcp\nrecon_max: 2000\nfile_client: local\n")
	var logs bytes.Buffer
	m, err := LoadMinion(dir, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if want := `options="multiprocessing, ipc_mode"`; !strings.Contains(logs.String(), want) {
		t.Errorf("warning = %s, want %s", logs.String(), want)
	}
	if diff := cmp.Diff([]string{"m1", "m2"}, m.Masters); diff != "" || m.ReconMax != 2*time.Second {
		t.Errorf("masters %s recon_max %s", diff, m.ReconMax)
	}
}

func TestDefaultsFromTheTable(t *testing.T) {
	m := DefaultMaster("/etc/salt")
	if m.SSHTimeout != 60*time.Second || m.CacheLife != time.Hour || m.KeepJobsTime != 24*time.Hour ||
		!m.SignPubMessages || m.FileRoots["base"][0] != "/srv/salt" || m.Nodegroups == nil {
		t.Errorf("master defaults: %+v", m)
	}
	n := DefaultMinion("/etc/salt")
	if n.ReconDefault != time.Second || len(n.Masters) != 1 || n.Masters[0] != "salt" || n.Grains == nil || !n.ReconRandomize {
		t.Errorf("minion defaults: %+v", n)
	}
}

// sock_dir goes under root_dir like pki_dir and cachedir, given or not
// (salt/config/__init__.py apply_master_config prepend_root_dirs).
func TestMasterSockDirUnderRootDir(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "master"), "root_dir: /srv/brine\nsock_dir: /run/salt\n")
	m, err := LoadMaster(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.SockDir != "/srv/brine/run/salt" {
		t.Errorf("sock_dir = %s", m.SockDir)
	}
}
