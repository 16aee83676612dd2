package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/brinesalt/brine/internal/config"
	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
)

// TestFlagTable pins salt-ssh's option table: names, shorthands, types
// and defaults, in the order --help prints them.
func TestFlagTable(t *testing.T) {
	t.Setenv("SALT_CONFIG_DIR", "")
	want := [][4]string{
		{"config-dir", "c", "string", "/etc/salt"},
		{"log-level", "l", "string", "warning"},
		{"log-file", "", "string", ""},
		{"log-file-level", "", "string", ""},
		{"raw", "r", "bool", "false"},
		{"raw-shell", "", "bool", "false"},
		{"roster", "", "string", "flat"},
		{"roster-file", "", "string", ""},
		{"refresh", "", "bool", "false"},
		{"refresh-cache", "", "bool", "false"},
		{"max-procs", "", "int", "25"},
		{"verbose", "v", "bool", "false"},
		{"static", "s", "bool", "false"},
		{"summary", "", "bool", "false"},
		{"wipe", "w", "bool", "false"},
		{"rand-thin-dir", "W", "bool", "false"},
		{"regen-thin", "t", "bool", "false"},
		{"thin", "", "bool", "false"},
		{"relay", "", "bool", "false"},
		{"pre-flight", "", "bool", "false"},
		{"ssh-option", "", "stringArray", "[]"},
		{"priv", "", "string", ""},
		{"ignore-host-keys", "i", "bool", "false"},
		{"no-host-keys", "", "bool", "false"},
		{"user", "", "string", "root"},
		{"identities-only", "", "bool", "false"},
		{"sudo", "", "bool", "false"},
		{"timeout", "", "int", "0"},
		{"jid", "", "string", ""},
		{"saltfile", "", "string", ""},
		{"extra-filerefs", "", "string", ""},
		{"remote-port-forwards", "", "string", ""},
		{"passwd", "", "string", ""},
		{"askpass", "", "bool", "false"},
		{"priv-passwd", "", "string", ""},
		{"key-deploy", "", "bool", "false"},
		{"update-roster", "", "bool", "false"},
		{"scan-ports", "", "string", "22"},
		{"scan-timeout", "", "float64", "0.01"},
		{"pcre", "E", "bool", "false"},
		{"list", "L", "bool", "false"},
		{"grain", "G", "bool", "false"},
		{"grain-pcre", "P", "bool", "false"},
		{"nodegroup", "N", "bool", "false"},
		{"pillar", "I", "bool", "false"},
		{"pillar-pcre", "J", "bool", "false"},
		{"ipcidr", "S", "bool", "false"},
		{"compound", "C", "bool", "false"},
		{"range", "R", "bool", "false"},
		{"out", "", "string", ""},
		{"output", "", "string", ""},
		{"out-indent", "", "int", "-1"},
		{"out-file", "", "string", ""},
		{"out-file-append", "", "bool", "false"},
		{"no-color", "", "bool", "false"},
		{"force-color", "", "bool", "false"},
		{"state-output", "", "string", ""},
		{"state-verbose", "", "string", ""},
	}
	var got [][4]string
	newFlagSet(&options{}, io.Discard).VisitAll(func(f *pflag.Flag) {
		got = append(got, [4]string{f.Name, f.Shorthand, f.Value.Type(), f.DefValue})
	})
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("flag table (-want +got):\n%s", d)
	}
}

// TestSaltfileDests pins the Saltfile keys (Salt's parser dest names) to
// flags, and checks that every flag but the aliases and --saltfile itself
// can be set from a Saltfile.
func TestSaltfileDests(t *testing.T) {
	want := map[string]string{
		"config_dir":               "config-dir",
		"log_level":                "log-level",
		"ssh_log_file":             "log-file",
		"log_level_logfile":        "log-file-level",
		"jid":                      "jid",
		"raw_shell":                "raw",
		"roster":                   "roster",
		"roster_file":              "roster-file",
		"refresh_cache":            "refresh",
		"ssh_max_procs":            "max-procs",
		"extra_filerefs":           "extra-filerefs",
		"verbose":                  "verbose",
		"static":                   "static",
		"ssh_wipe":                 "wipe",
		"rand_thin_dir":            "rand-thin-dir",
		"regen_thin":               "regen-thin",
		"ssh_run_pre_flight":       "pre-flight",
		"ssh_relay":                "relay",
		"cli_summary":              "summary",
		"ssh_remote_port_forwards": "remote-port-forwards",
		"ssh_options":              "ssh-option",
		"ssh_priv":                 "priv",
		"ssh_priv_passwd":          "priv-passwd",
		"ignore_host_keys":         "ignore-host-keys",
		"no_host_keys":             "no-host-keys",
		"ssh_user":                 "user",
		"ssh_passwd":               "passwd",
		"ssh_askpass":              "askpass",
		"ssh_key_deploy":           "key-deploy",
		"ssh_identities_only":      "identities-only",
		"ssh_sudo":                 "sudo",
		"ssh_update_roster":        "update-roster",
		"ssh_scan_ports":           "scan-ports",
		"ssh_scan_timeout":         "scan-timeout",
		"pcre":                     "pcre",
		"list":                     "list",
		"grain":                    "grain",
		"grain_pcre":               "grain-pcre",
		"pillar":                   "pillar",
		"pillar_pcre":              "pillar-pcre",
		"nodegroup":                "nodegroup",
		"compound":                 "compound",
		"ipcidr":                   "ipcidr",
		"range":                    "range",
		"output":                   "out",
		"output_indent":            "out-indent",
		"output_file":              "out-file",
		"output_file_append":       "out-file-append",
		"no_color":                 "no-color",
		"force_color":              "force-color",
		"state_output":             "state-output",
		"state_verbose":            "state-verbose",
		"timeout":                  "timeout",
	}
	if d := cmp.Diff(want, saltfileDests); d != "" {
		t.Errorf("saltfile dests (-want +got):\n%s", d)
	}
	covered := map[string]bool{}
	for _, f := range saltfileDests {
		covered[f] = true
	}
	aliases := []string{"raw-shell", "refresh-cache", "thin", "output", "saltfile"}
	newFlagSet(&options{}, io.Discard).VisitAll(func(f *pflag.Flag) {
		if !covered[f.Name] && !slices.Contains(aliases, f.Name) {
			t.Errorf("flag --%s has no Saltfile key", f.Name)
		}
		delete(covered, f.Name)
	})
	for f := range covered {
		t.Errorf("Saltfile key maps to --%s, which does not exist", f)
	}
}

func writeSaltfile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "Saltfile")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSaltfileApplies checks that Saltfile values act as flags unless the
// user gave the flag, and that unknown keys are warned about.
func TestSaltfileApplies(t *testing.T) {
	sf := writeSaltfile(t, `salt-ssh:
  config_dir: /srv/brine/etc
  ssh_max_procs: 7
  ssh_wipe: True
  roster_file: /srv/brine/roster
  ssh_user: deploy
  ssh_options:
    - Port=2222
    - Compression=yes
  ssh_scan_ports: [22, 2222]
  ssh_scan_timeout: 0.5
  raw_shell: true
  no_such_option: 1
`)
	var stderr bytes.Buffer
	o, err := parseArgs([]string{"--saltfile", sf, "--user", "cli", "*", "uptime"}, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]any{
		"configDir": o.configDir, "maxProcs": o.maxProcs, "wipe": o.wipe, "rosterFile": o.rosterFile,
		"user": o.user, "sshOptions": o.sshOptions, "scanPorts": o.scanPorts, "scanTimeout": o.scanTimeout,
		"raw": o.raw, "args": o.args, "set": o.set["max-procs"] && o.set["user"] && !o.set["sudo"],
	}
	want := map[string]any{
		"configDir": "/srv/brine/etc", "maxProcs": 7, "wipe": true, "rosterFile": "/srv/brine/roster",
		"user": "cli", "sshOptions": []string{"Port=2222", "Compression=yes"}, "scanPorts": "22,2222",
		"scanTimeout": 0.5, "raw": true, "args": []string{"uptime"}, "set": true,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("options (-want +got):\n%s", d)
	}
	if !strings.Contains(stderr.String(), "no_such_option") {
		t.Errorf("no warning about no_such_option in %q", stderr.String())
	}
}

func TestSaltfileErrors(t *testing.T) {
	t.Setenv(config.SaltfileEnv, "")
	if _, err := parseArgs([]string{"--saltfile", "/nonexistent/Saltfile", "*", "test.ping"}, io.Discard); err == nil {
		t.Error("missing --saltfile: no error")
	}
	bad := writeSaltfile(t, "salt-ssh:\n  ssh_max_procs: many\n")
	if _, err := parseArgs([]string{"--saltfile", bad, "*", "test.ping"}, io.Discard); err == nil || !strings.Contains(err.Error(), "ssh_max_procs") {
		t.Errorf("bad value: got %v", err)
	}
	t.Setenv(config.SaltfileEnv, writeSaltfile(t, "salt-ssh:\n  ssh_sudo: true\n"))
	o, err := parseArgs([]string{"*", "test.ping"}, io.Discard)
	if err != nil || !o.sudo {
		t.Errorf("SALT_SALTFILE: got sudo=%v, %v", o != nil && o.sudo, err)
	}
}
