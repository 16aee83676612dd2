package main

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/brinesalt/brine/internal/config"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/roster"
)

// rosterExtras fills in the roster settings beyond the flat roster's:
// the master's nodegroups for -N, ssh_config_file for the sshconfig
// backend, ssh_scan_ports and ssh_scan_timeout for the scan backend,
// ssh_update_roster, and ssh_remote_port_forwards. A flag the user gave
// (or a Saltfile set) wins over the master config, as Salt's
// MergeConfigMixIn makes it. The master option roster (the backends)
// likewise replaces --roster's default in o.
func rosterExtras(rc *roster.Config, cfg *config.Master, o *options) error {
	if s, ok := cfg.Raw.Value("roster").(string); ok && s != "" && !o.set["roster"] {
		o.roster = s
	}
	rc.Nodegroups = plainMap(cfg.Nodegroups)
	rc.SSHConfigFile = cfg.SSHConfigFile
	rc.ScanPorts = o.scanPorts
	if !o.set["scan-ports"] {
		if v, ok := cfg.Raw.Get("ssh_scan_ports"); ok && v != nil {
			rc.ScanPorts = commaList(v)
		}
	}
	secs := o.scanTimeout
	if !o.set["scan-timeout"] {
		if v, ok := cfg.Raw.Get("ssh_scan_timeout"); ok && v != nil {
			if _, err := fmt.Sscan(ordered.KeyString(v), &secs); err != nil {
				return fmt.Errorf("config ssh_scan_timeout: want seconds, got %q", ordered.KeyString(v))
			}
		}
	}
	if secs <= 0 || math.IsNaN(secs) || secs > 3600 {
		return fmt.Errorf("scan timeout %v: want seconds between 0 and 3600", secs)
	}
	rc.ScanTimeout = time.Duration(secs * float64(time.Second))
	rc.UpdateRoster = o.updateRoster
	if b, ok := cfg.Raw.Value("ssh_update_roster").(bool); ok && !o.set["update-roster"] {
		rc.UpdateRoster = b
	}
	rc.Options.RemotePortForwards = o.remoteFwds
	if !o.set["remote-port-forwards"] {
		if v, ok := cfg.Raw.Get("ssh_remote_port_forwards"); ok && v != nil {
			rc.Options.RemotePortForwards = commaList(v)
		}
	}
	return nil
}

// plainMap turns a mapping from the config into the map[string]any
// state/target takes.
func plainMap(m *ordered.Map) map[string]any {
	out := map[string]any{}
	m.Range(func(k, v any) bool {
		out[ordered.KeyString(k)] = v
		return true
	})
	return out
}

// commaList reads a string, a number or a list as a comma list.
func commaList(v any) string {
	if l, ok := v.([]any); ok {
		parts := make([]string, len(l))
		for i, e := range l {
			parts[i] = ordered.KeyString(e)
		}
		return strings.Join(parts, ",")
	}
	return ordered.KeyString(v)
}
