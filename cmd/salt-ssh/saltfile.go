package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/brinesalt/brine/internal/config"
	"github.com/brinesalt/brine/internal/logging"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/spf13/pflag"
)

// saltfileDests maps the keys of a Saltfile's salt-ssh section — Salt's
// option dest names (salt/utils/parsers.py SaltSSHOptionParser and its
// mixins) — to Brine's flags. A test pins it against the flag table.
var saltfileDests = map[string]string{
	// ConfigDirMixIn, LogLevelMixIn, JIDMixin
	"config_dir":        "config-dir",
	"log_level":         "log-level",
	"ssh_log_file":      "log-file",
	"log_level_logfile": "log-file-level",
	"jid":               "jid",
	// SaltSSHOptionParser
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
	"ssh_relay":                "relay",   // Brine's own (docs/RELAY.md)
	"cli_summary":              "summary", // salt's --summary dest (salt/utils/parsers.py)
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
	// TargetOptionsMixIn (and Brine's extra target flags)
	"pcre":        "pcre",
	"list":        "list",
	"grain":       "grain",
	"grain_pcre":  "grain-pcre",
	"pillar":      "pillar",
	"pillar_pcre": "pillar-pcre",
	"nodegroup":   "nodegroup",
	"compound":    "compound",
	"ipcidr":      "ipcidr",
	"range":       "range",
	// OutputOptionsMixIn
	"output":             "out",
	"output_indent":      "out-indent",
	"output_file":        "out-file",
	"output_file_append": "out-file-append",
	"no_color":           "no-color",
	"force_color":        "force-color",
	"state_output":       "state-output",
	"state_verbose":      "state-verbose",
	// Brine's own
	"timeout": "timeout",
}

// applySaltfile finds and reads the Saltfile (config.FindSaltfile) and
// sets every option of its salt-ssh section whose flag the user did not
// give, as if it had been given (Salt's process_saltfile marks such
// options explicit, so they also override the master config). Keys that
// name no salt-ssh option are warned about; Salt sets them on its
// options object, where nothing reads them.
func applySaltfile(fs *pflag.FlagSet, o *options, stderr io.Writer) error {
	cwd, _ := os.Getwd()
	home, _ := os.UserHomeDir()
	path, err := config.FindSaltfile(o.saltfile, os.LookupEnv, cwd, home)
	if err != nil || path == "" {
		return err
	}
	sf, err := config.LoadSaltfile(path, "salt-ssh")
	if err != nil {
		return err
	}
	unknown, err := setFromSaltfile(fs, sf.Options)
	if err != nil {
		return fmt.Errorf("saltfile %s: %w", path, err)
	}
	log, err := logging.New(stderr, o.logLevel)
	if err != nil {
		return err
	}
	log.Info("loading Saltfile", "file", path)
	if len(unknown) > 0 {
		log.Warn("Saltfile options that salt-ssh does not have are ignored", "file", path, "options", strings.Join(unknown, ", "))
	}
	return nil
}

// setFromSaltfile applies opts to the flags the command line left unset
// and returns the keys it did not know.
func setFromSaltfile(fs *pflag.FlagSet, opts *ordered.Map) ([]string, error) {
	var unknown []string
	var err error
	opts.Range(func(k, v any) bool {
		dest := ordered.KeyString(k)
		name, ok := saltfileDests[dest]
		f := fs.Lookup(name)
		if !ok || f == nil {
			unknown = append(unknown, dest)
			return true
		}
		if f.Changed || v == nil {
			return true
		}
		err = setFlag(fs, f, dest, v)
		return err == nil
	})
	return unknown, err
}

// setFlag sets one flag from a YAML value: a list is one Set per item
// for repeatable flags (ssh_options) and a comma list otherwise
// (ssh_scan_ports: [22, 2222]).
func setFlag(fs *pflag.FlagSet, f *pflag.Flag, dest string, v any) error {
	var vals []string
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			vals = append(vals, ordered.KeyString(e))
		}
		if !strings.HasSuffix(f.Value.Type(), "Array") && !strings.HasSuffix(f.Value.Type(), "Slice") {
			vals = []string{strings.Join(vals, ",")}
		}
	case *ordered.Map:
		return fmt.Errorf("%s: expected a value, got a mapping", dest)
	case bool:
		vals = []string{fmt.Sprint(x)}
	default:
		vals = []string{ordered.KeyString(x)}
	}
	for _, s := range vals {
		if err := fs.Set(f.Name, s); err != nil {
			return fmt.Errorf("%s: %w", dest, err)
		}
	}
	return nil
}
