package roster

import (
	"context"
	"log/slog"
	"net"
	"path/filepath"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
)

// DefaultConfigDir is Salt's configuration directory (salt.syspaths.CONFIG_DIR).
const DefaultConfigDir = "/etc/salt"

// Config is what a backend needs to load its roster; cmd/ builds it from
// the master config and the command line.
type Config struct {
	// File is roster_file (--roster-file); empty means <ConfigDir>/roster.
	File string
	// ConfigDir is the master's config_dir; empty means /etc/salt.
	ConfigDir string
	// Renderer is the default render pipe (master opt renderer); empty
	// means "jinja|yaml". A "#!" first line in the roster overrides it.
	Renderer string
	// Render runs the Jinja step; nil fails a roster that uses Jinja.
	Render RenderFunc
	// RosterDefaults is the master's roster_defaults, merged under every
	// roster entry.
	RosterDefaults *ordered.Map
	// Options fills in keys that neither the entry nor roster_defaults set.
	Options Options
	// ListNodegroups is ssh_list_nodegroups, for tgt_type "nodegroup".
	ListNodegroups map[string]any
	// Nodegroups is the master's nodegroups (compound expressions), used
	// for -N names that ssh_list_nodegroups does not define (see
	// Config.matcher).
	Nodegroups map[string]any
	// SSHConfigFile is ssh_config_file for the sshconfig backend; empty
	// means ~/.ssh/config.
	SSHConfigFile string
	// ScanPorts is ssh_scan_ports (--scan-ports) for the scan backend, a
	// comma list; empty means "22".
	ScanPorts string
	// ScanTimeout is ssh_scan_timeout (--scan-timeout) per connection
	// attempt; zero means Salt's 0.01 s.
	ScanTimeout time.Duration
	// ScanMaxHosts bounds the addresses one scan target may cover; zero
	// means DefaultScanMaxHosts.
	ScanMaxHosts int
	// Reachable reports whether a command-line target that matched nothing
	// names a host (Salt's salt.utils.network.is_reachable_host: it
	// resolves). Nil means a DNS lookup.
	Reachable func(ctx context.Context, host string) bool
	// UpdateRoster (--update-roster, ssh_update_roster) appends ad-hoc
	// targets to the roster file.
	UpdateRoster bool
	// Logger receives warnings (unknown keys); nil discards them.
	Logger *slog.Logger
}

// RosterFile returns the path Salt would read (salt/roster/__init__.py
// get_roster_file): roster_file, else <config_dir>/roster.
func (c Config) RosterFile() string {
	if c.File != "" {
		return c.File
	}
	dir := c.ConfigDir
	if dir == "" {
		dir = DefaultConfigDir
	}
	return filepath.Join(dir, "roster")
}

func (c Config) logger() *slog.Logger {
	if c.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Logger
}

func (c Config) reachable(ctx context.Context, host string) bool {
	if c.Reachable != nil {
		return c.Reachable(ctx, host)
	}
	if net.ParseIP(host) != nil {
		return true
	}
	addrs, err := net.DefaultResolver.LookupHost(ctx, host)
	return err == nil && len(addrs) > 0
}
