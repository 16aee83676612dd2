package sshrun

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
// likewise replaces --roster's default in s.
func rosterExtras(rc *roster.Config, cfg *config.Master, s *Settings) error {
	if r, ok := cfg.Raw.Value("roster").(string); ok && r != "" && !s.Set["roster"] {
		s.Roster = r
	}
	rc.Nodegroups = plainMap(cfg.Nodegroups)
	rc.SSHConfigFile = cfg.SSHConfigFile
	rc.ScanPorts = s.ScanPorts
	if !s.Set["scan-ports"] {
		if v, ok := cfg.Raw.Get("ssh_scan_ports"); ok && v != nil {
			rc.ScanPorts = CommaList(v)
		}
	}
	secs := s.ScanTimeout
	if !s.Set["scan-timeout"] {
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
	rc.UpdateRoster = s.UpdateRoster
	if b, ok := cfg.Raw.Value("ssh_update_roster").(bool); ok && !s.Set["update-roster"] {
		rc.UpdateRoster = b
	}
	rc.Options.RemotePortForwards = s.RemotePortForwards
	if !s.Set["remote-port-forwards"] {
		if v, ok := cfg.Raw.Get("ssh_remote_port_forwards"); ok && v != nil {
			rc.Options.RemotePortForwards = CommaList(v)
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

// CommaList reads a string, a number or a list as a comma list (a
// salt-ssh target given as a list, roster options like scan_ports).
func CommaList(v any) string {
	if l, ok := v.([]any); ok {
		parts := make([]string, len(l))
		for i, e := range l {
			parts[i] = ordered.KeyString(e)
		}
		return strings.Join(parts, ",")
	}
	return ordered.KeyString(v)
}
