// Package config loads Salt's configuration files — the master config
// read by salt-ssh and salt-master, with its master.d/*.conf includes —
// into typed structs with Salt's defaults (salt/config/__init__.py
// DEFAULT_MASTER_OPTS). Options Brine does not know are kept in Raw and
// named in one warning, never rejected, so an existing /etc/salt works.
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/brinesalt/brine/state/ordered"
	"github.com/brinesalt/brine/state/saltyaml"
)

// DefaultDir is Salt's configuration directory.
const DefaultDir = "/etc/salt"

// Master is the master configuration as salt-ssh uses it.
type Master struct {
	// Dir is the configuration directory (-c); File the main file read.
	Dir, File string

	RootDir  string
	PKIDir   string
	CacheDir string

	SSHMaxProcs       int
	SSHUser           string
	SSHPort           int
	SSHTimeout        time.Duration
	SSHSudo           bool
	SSHSudoUser       string
	SSHIdentitiesOnly bool
	SSHUseHomeKey     bool
	SSHConfigFile     string
	SSHRunPreFlight   bool
	KnownHostsFile    string
	ThinDir           string
	RosterFile        string
	RosterDefaults    *ordered.Map
	Nodegroups        *ordered.Map
	SSHListNodegroups *ordered.Map
	CacheLife         time.Duration

	FileRoots   map[string][]string
	PillarRoots map[string][]string

	// Raw holds every option as read, known or not, for modules that look
	// options up by name (config.get, opts in Jinja).
	Raw *ordered.Map
}

// DefaultMaster returns the master configuration with Salt's defaults
// for configuration directory dir.
func DefaultMaster(dir string) *Master {
	home, _ := os.UserHomeDir()
	return &Master{
		Dir: dir, File: filepath.Join(dir, "master"),
		RootDir: "/", PKIDir: "/etc/salt/pki/master", CacheDir: "/var/cache/salt/master",
		SSHMaxProcs: 25, SSHUser: "root", SSHPort: 22, SSHTimeout: 60 * time.Second,
		SSHConfigFile:  filepath.Join(home, ".ssh", "config"),
		KnownHostsFile: filepath.Join(home, ".ssh", "known_hosts"),
		CacheLife:      60 * time.Minute,
		FileRoots:      map[string][]string{"base": {"/srv/salt"}},
		PillarRoots:    map[string][]string{"base": {"/srv/pillar"}},
		RosterDefaults: ordered.New(), Nodegroups: ordered.New(), SSHListNodegroups: ordered.New(),
		Raw: ordered.New(),
	}
}

// LoadMaster reads <dir>/master and the files its default_include glob
// names (master.d/*.conf), later files overriding earlier ones. A missing
// main file means all defaults, as with Salt. Errors name the file and
// line.
func LoadMaster(dir string, log *slog.Logger) (*Master, error) {
	m := DefaultMaster(dir)
	raw, err := readWithIncludes(dir, m.File, "master.d/*.conf")
	if err != nil {
		return nil, err
	}
	if err := m.apply(raw, log); err != nil {
		return nil, err
	}
	return m, nil
}

// readWithIncludes merges the main file (optional) and then the files
// its default_include glob names (relative to dir; include by default),
// in name order, later files overriding earlier ones.
func readWithIncludes(dir, main, include string) (*ordered.Map, error) {
	raw := ordered.New()
	if err := mergeFile(raw, main, true); err != nil {
		return nil, err
	}
	if s, ok := raw.Value("default_include").(string); ok && s != "" {
		include = s
	}
	if !filepath.IsAbs(include) {
		include = filepath.Join(dir, include)
	}
	extra, _ := filepath.Glob(include)
	sort.Strings(extra)
	for _, f := range extra {
		if err := mergeFile(raw, f, false); err != nil {
			return nil, err
		}
	}
	return raw, nil
}

func mergeFile(dst *ordered.Map, path string, optional bool) error {
	src, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && optional {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read config: %w", err)
	}
	v, err := saltyaml.Load(src, path)
	if err != nil {
		return fmt.Errorf("load config: %w", err)
	}
	if v == nil {
		return nil
	}
	top, ok := v.(*ordered.Map)
	if !ok {
		return fmt.Errorf("load config %s: the file must hold a mapping of options, not %s", path, typeName(v))
	}
	top.Range(func(k, v any) bool { dst.Set(ordered.KeyString(k), v); return true })
	return nil
}

// known lists the options apply understands; anything else is kept in
// Raw and mentioned in one warning.
var known = map[string]bool{}

func init() {
	for _, k := range strings.Fields(`root_dir pki_dir cachedir ssh_max_procs ssh_user ssh_port
		ssh_timeout ssh_sudo ssh_sudo_user ssh_identities_only ssh_use_home_key ssh_config_file
		ssh_run_pre_flight known_hosts_file thin_dir roster_file roster_defaults nodegroups
		ssh_list_nodegroups cache_life file_roots pillar_roots default_include
		ssh_passwd ssh_priv_passwd ssh_priv ssh_minion_opts ssh_log_file ssh_scan_ports
		ssh_scan_timeout ssh_wipe rosters roster log_level log_file timeout
		interface publish_port ret_port worker_threads auto_accept autosign_file autoreject_file
		open_mode keep_jobs keep_jobs_seconds max_minions gather_job_timeout zmq_filtering
		rotate_aes_key publish_session id user sock_dir extension_modules file_client
		state_output state_verbose hash_type ssh_grains pillar_source_merging_strategy
		pillar_merge_lists ext_pillar renderer jinja_env allow_undefined
		ssh_update_roster ssh_remote_port_forwards ssh_keepalive ssh_keepalive_interval
		ssh_keepalive_count_max log_level_logfile log_fmt_logfile log_datefmt_logfile`) {
		known[k] = true
	}
}

func (m *Master) apply(raw *ordered.Map, log *slog.Logger) error {
	m.Raw = raw
	r := &reader{raw: raw}
	var unknown []string
	str, num, boolean, seconds, mapping := r.str, r.num, r.boolean, r.duration, r.mapping
	str("root_dir", &m.RootDir)
	str("pki_dir", &m.PKIDir)
	str("cachedir", &m.CacheDir)
	num("ssh_max_procs", &m.SSHMaxProcs)
	str("ssh_user", &m.SSHUser)
	num("ssh_port", &m.SSHPort)
	seconds("ssh_timeout", time.Second, &m.SSHTimeout)
	boolean("ssh_sudo", &m.SSHSudo)
	str("ssh_sudo_user", &m.SSHSudoUser)
	boolean("ssh_identities_only", &m.SSHIdentitiesOnly)
	boolean("ssh_use_home_key", &m.SSHUseHomeKey)
	str("ssh_config_file", &m.SSHConfigFile)
	boolean("ssh_run_pre_flight", &m.SSHRunPreFlight)
	str("known_hosts_file", &m.KnownHostsFile)
	str("thin_dir", &m.ThinDir)
	str("roster_file", &m.RosterFile)
	mapping("roster_defaults", &m.RosterDefaults)
	mapping("nodegroups", &m.Nodegroups)
	mapping("ssh_list_nodegroups", &m.SSHListNodegroups)
	seconds("cache_life", time.Minute, &m.CacheLife)
	for key, dst := range map[string]*map[string][]string{"file_roots": &m.FileRoots, "pillar_roots": &m.PillarRoots} {
		if v, ok := raw.Get(key); ok && v != nil {
			roots, err := toRoots(v)
			if err != nil {
				r.fail(key, err)
				continue
			}
			*dst = roots
		}
	}
	for _, k := range raw.StringKeys() {
		if !known[k] {
			unknown = append(unknown, k)
		}
	}
	if len(r.errs) > 0 {
		sort.Strings(r.errs)
		return fmt.Errorf("config %s: %s", m.File, strings.Join(r.errs, "; "))
	}
	if len(unknown) > 0 && log != nil {
		log.Warn("keeping options Brine does not use", "file", m.File, "options", strings.Join(unknown, ", "))
	}
	m.PKIDir = prependRoot(m.RootDir, m.PKIDir)
	m.CacheDir = prependRoot(m.RootDir, m.CacheDir)
	return nil
}

// prependRoot places path under root_dir as salt/config/__init__.py
// _prepend_root_dir does, unless it is already there.
func prependRoot(root, path string) string {
	if root == "" || root == "/" || strings.HasPrefix(path, root) {
		return path
	}
	return filepath.Join(root, path)
}

func toInt(v any) (int, error) {
	switch x := v.(type) {
	case int:
		return x, nil
	case float64:
		return int(x), nil
	case string:
		n, err := strconv.Atoi(strings.TrimSpace(x))
		if err != nil {
			return 0, fmt.Errorf("want a number, got %q", x)
		}
		return n, nil
	}
	return 0, fmt.Errorf("want a number, got %s", typeName(v))
}

func toFloat(v any) (float64, error) {
	switch x := v.(type) {
	case int:
		return float64(x), nil
	case float64:
		return x, nil
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		if err != nil {
			return 0, fmt.Errorf("want a number, got %q", x)
		}
		return f, nil
	}
	return 0, fmt.Errorf("want a number, got %s", typeName(v))
}

func toRoots(v any) (map[string][]string, error) {
	m, ok := v.(*ordered.Map)
	if !ok {
		return nil, fmt.Errorf("want a mapping of saltenv to directories, got %s", typeName(v))
	}
	out := map[string][]string{}
	var err error
	m.Range(func(k, v any) bool {
		env := ordered.KeyString(k)
		list, ok := v.([]any)
		if !ok {
			err = fmt.Errorf("saltenv %s: want a list of directories, got %s", env, typeName(v))
			return false
		}
		for _, d := range list {
			out[env] = append(out[env], ordered.KeyString(d))
		}
		return true
	})
	return out, err
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "nothing"
	case bool:
		return "a boolean"
	case int, float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "a list"
	case *ordered.Map:
		return "a mapping"
	}
	return fmt.Sprintf("%T", v)
}
