package config

import (
	"strings"
	"testing"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/saltyaml"
)

// FuzzParseSaltfile feeds Saltfile text to the parser: it must return a
// section or an error naming the file, never panic.
func FuzzParseSaltfile(f *testing.F) {
	for _, s := range []string{
		"salt-ssh:\n  roster_file: /etc/salt/roster\n  ssh_max_procs: 50\n",
		"salt-ssh: ~\n", "salt-ssh: [a]\n", "- a\n", "", "salt-ssh:\n  config_dir: &a {x: *a}\n",
		"salt: {timeout: 5}\nsalt-ssh: {ssh_scan_ports: [22, 2222]}\n",
	} {
		f.Add(s, "salt-ssh")
	}
	f.Fuzz(func(t *testing.T, src, prog string) {
		sf, err := ParseSaltfile([]byte(src), "Saltfile", prog)
		if err != nil {
			if !strings.Contains(err.Error(), "Saltfile") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if sf.Options == nil {
			t.Fatal("nil Options without an error")
		}
	})
}

// typedConfigSeeds are config files that exercise every kind of typed
// option, right and wrong.
var typedConfigSeeds = []string{
	"ssh_max_procs: 50\nssh_timeout: 2.5\nfile_roots: {base: [/srv/salt]}\nroster_defaults: {sudo: True}\n",
	"ssh_max_procs: many\nssh_sudo: yes please\nfile_roots: /srv\nnodegroups: [a]\n",
	"master: [m1, m2]\nrecon_max: 1e3\nkeysize: '4096'\ngrains: {role: web}\n",
	"master: {a: 1}\nmaster_port: -1\nrecon_default: .inf\nopen_mode: 1\n",
	"file_roots: {base: [1, ~, {a: b}], dev: x}\npillar_roots: {}\nkeep_jobs_seconds: ~\n",
	"timeout: 1e300\nrequest_server_ttl: -5\nacceptance_wait_time: nan\n",
}

// FuzzMasterConfig applies YAML the loader accepts to the typed master
// config: any option may be of any type, and a wrong one is an error
// naming the file and the option, never a panic.
func FuzzMasterConfig(f *testing.F) {
	for _, s := range typedConfigSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		raw := loadMapping(t, src)
		if raw == nil {
			return
		}
		m := DefaultMaster("/etc/salt")
		if err := m.apply(raw, nil); err != nil && !strings.Contains(err.Error(), m.File) {
			t.Fatalf("error does not name the file: %v", err)
		}
	})
}

// FuzzMinionConfig is FuzzMasterConfig for the minion config.
func FuzzMinionConfig(f *testing.F) {
	for _, s := range typedConfigSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		raw := loadMapping(t, src)
		if raw == nil {
			return
		}
		m := DefaultMinion("/etc/salt")
		if err := m.Apply(raw, nil); err != nil && !strings.Contains(err.Error(), m.File) {
			t.Fatalf("error does not name the file: %v", err)
		}
	})
}

func loadMapping(t *testing.T, src string) *ordered.Map {
	t.Helper()
	v, err := saltyaml.Load([]byte(src), "master")
	if err != nil {
		return nil
	}
	m, _ := v.(*ordered.Map)
	return m
}
