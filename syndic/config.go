package syndic

import (
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"strconv"
	"time"

	"github.com/brinesalt/brine/internal/config"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/master"
)

// Config is what a syndic runs with, merged as salt/config/__init__.py
// syndic_config merges it: the syndic node's master config updated by
// its minion config, then id and pki_dir from the minion file, master
// from syndic_master, master_port from syndic_master_port (else the
// minion file's master_port), cachedir and sock_dir from the master
// file, the log in syndic_log_file.
type Config struct {
	ID string
	// Uppers are the upper masters' request addresses (host:port), one
	// per syndic_master entry (a list is multi-syndic).
	Uppers []string
	// Minion is the minion config each upper link signs in with: the
	// minion file's, with id, pki_dir and the upper master set.
	Minion *config.Minion
	// Local is the lower master's config, whose local socket and job
	// cache the syndic uses.
	Local master.Options
	// LocalMasterPub is the lower master's master.pub, which an upper
	// master must not have (a syndic under its own master).
	LocalMasterPub string

	Wait                time.Duration // syndic_wait
	EventForwardTimeout time.Duration // syndic_event_forward_timeout
	JIDForwardCacheHWM  int           // syndic_jid_forward_cache_hwm
	Failover            string        // syndic_failover: random or ordered
	Mode                string        // syndic_mode: sync or cluster
	Retries             int           // syndic_retries
	LogFile             string        // syndic_log_file
	JobCache            string        // the lower master's master_job_cache
	LegacyStartEvents   bool          // enable_legacy_startup_events
}

// LoadConfig reads <dir>/master and <dir>/minion (with their .d
// includes) and merges them as syndic_config does.
func LoadConfig(dir string, log *slog.Logger) (*Config, error) {
	mc, err := config.LoadMaster(dir, log)
	if err != nil {
		return nil, err
	}
	mn, err := config.LoadMinion(dir, log)
	if err != nil {
		return nil, err
	}
	return merge(mc, mn, log)
}

// merge is syndic_config over a loaded master and minion config.
func merge(mc *config.Master, mn *config.Minion, log *slog.Logger) (*Config, error) {
	raw := mc.Raw.Copy()
	mn.Raw.Range(func(k, v any) bool { raw.Set(k, v); return true })
	lo, err := master.OptionsFromConfig(mc)
	if err != nil {
		return nil, err
	}
	c := &Config{ID: mn.ID, Local: lo, Failover: "random", Mode: "sync", Retries: 3, JIDForwardCacheHWM: 100,
		Wait: lo.SyndicWait, EventForwardTimeout: 500 * time.Millisecond, JobCache: "local_cache"}
	if c.ID == "" {
		return nil, fmt.Errorf("config %s: the syndic needs an id (the minion file's id)", mn.File)
	}
	port := mn.MasterPort
	if p, ok := raw.Value("syndic_master_port").(int); ok {
		port = p
	}
	ups, err := uppers(raw.Value("syndic_master"), port)
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", mc.File, err)
	}
	c.Uppers = ups
	if err := c.readOptions(raw, mc.File); err != nil {
		return nil, err
	}
	c.warnUnsupported(raw, log)
	m := *mn
	m.Masters, m.MasterPort = ups, port
	if f, ok := raw.Value("syndic_finger").(string); ok && f != "" {
		m.MasterFinger = f
	}
	c.Minion = &m
	c.LogFile = prependRoot(mc.RootDir, c.LogFile)
	return c, nil
}

// uppers is syndic_master (a host, host:port, or a list of them; Salt's
// default "masterofmasters") as request addresses.
func uppers(v any, port int) ([]string, error) {
	var hosts []string
	switch x := v.(type) {
	case nil:
		hosts = []string{"masterofmasters"}
	case string:
		hosts = []string{x}
	case []any:
		for _, h := range x {
			s, ok := h.(string)
			if !ok || s == "" {
				return nil, fmt.Errorf("syndic_master: %v is not a host name", h)
			}
			hosts = append(hosts, s)
		}
	default:
		return nil, fmt.Errorf("syndic_master: %v is not a host or a list of hosts", v)
	}
	var out []string
	for _, h := range hosts {
		if host, p, err := net.SplitHostPort(h); err == nil {
			if _, err := strconv.Atoi(p); err != nil {
				return nil, fmt.Errorf("syndic_master: bad port in %q", h)
			}
			out = append(out, net.JoinHostPort(host, p))
			continue
		}
		out = append(out, net.JoinHostPort(h, strconv.Itoa(port)))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("syndic_master: no master named")
	}
	return out, nil
}

// readOptions reads the syndic_* options of the merged config.
func (c *Config) readOptions(raw *ordered.Map, file string) error {
	if n, ok := raw.Value("syndic_wait").(int); ok && n >= 0 {
		c.Wait = time.Duration(n) * time.Second
	}
	if v, ok := ordered.Number(raw.Value("syndic_event_forward_timeout")); ok {
		if v <= 0 {
			return fmt.Errorf("config %s: syndic_event_forward_timeout must be more than 0, not %v", file, v)
		}
		c.EventForwardTimeout = time.Duration(v * float64(time.Second))
	}
	if n, ok := raw.Value("syndic_jid_forward_cache_hwm").(int); ok && n > 0 {
		c.JIDForwardCacheHWM = n
	}
	if s, ok := raw.Value("syndic_failover").(string); ok && s != "" {
		if s != "random" && s != "ordered" {
			return fmt.Errorf("config %s: syndic_failover is random or ordered, not %q", file, s)
		}
		c.Failover = s
	}
	if s, ok := raw.Value("syndic_mode").(string); ok && s != "" {
		if s != "sync" && s != "cluster" {
			return fmt.Errorf("config %s: syndic_mode is sync or cluster, not %q", file, s)
		}
		c.Mode = s
	}
	if n, ok := raw.Value("syndic_retries").(int); ok && n > 0 {
		c.Retries = n
	}
	c.LogFile = "/var/log/salt/syndic"
	if s, ok := raw.Value("syndic_log_file").(string); ok && s != "" {
		c.LogFile = s
	}
	if s, ok := raw.Value("master_job_cache").(string); ok && s != "" {
		c.JobCache = s
	}
	c.LegacyStartEvents, _ = raw.Value("enable_legacy_startup_events").(bool)
	return nil
}

// warnUnsupported names the syndic options Brine reads but does not act
// on, so none is silently ignored.
func (c *Config) warnUnsupported(raw *ordered.Map, log *slog.Logger) {
	if log == nil {
		return
	}
	if raw.Has("syndic_forward_all_events") {
		log.Warn("syndic_forward_all_events has no effect: Salt 3006 defines it but never reads it; syndic_mode says what is forwarded")
	}
	if raw.Has("syndic_pidfile") {
		log.Warn("syndic_pidfile is not supported: salt-syndic writes no pid file (run it under systemd, salt-syndic.service)")
	}
}

func prependRoot(root, path string) string {
	if root == "" || root == "/" || path == "" {
		return path
	}
	return filepath.Join(root, path)
}
