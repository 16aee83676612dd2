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

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/saltyaml"
)

// Master is the master configuration as salt-ssh, salt-master and the
// other master-side commands use it. Its typed fields are filled from
// masterOptions; everything else stays in Raw.
type Master struct {
	// Dir is the configuration directory (-c); File the main file read.
	Dir, File string

	RootDir  string
	PKIDir   string
	CacheDir string
	SockDir  string

	SSHMaxProcs       int
	SSHUser           string
	SSHPort           int
	SSHTimeout        time.Duration
	SSHSudo           bool
	SSHSudoUser       string
	SSHIdentitiesOnly bool
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

	// The salt-master daemon's options (master.OptionsFromConfig).
	Interface           string
	PublishPort         int
	RetPort             int
	WorkerThreads       int
	AutoAccept          bool
	OpenMode            bool
	AutosignFile        string
	AutorejectFile      string
	AutosignGrainsDir   string
	PermissivePKIAccess bool
	MaxMinions          int
	KeepJobs            time.Duration // keep_jobs, deprecated for keep_jobs_seconds
	KeepJobsTime        time.Duration // keep_jobs_seconds
	Timeout             time.Duration
	GatherJobTimeout    time.Duration
	ZMQFiltering        bool
	RotateAESKey        bool
	PublishSession      time.Duration
	SignPubMessages     bool
	RequestServerTTL    time.Duration
	KeySize             int

	// Raw holds every option as read, known or not, for modules that look
	// options up by name (config.get, opts in Jinja).
	Raw *ordered.Map
}

// DefaultMaster returns the master configuration with Salt's defaults
// for configuration directory dir.
func DefaultMaster(dir string) *Master {
	m := &Master{Dir: dir, File: filepath.Join(dir, "master"), Raw: ordered.New()}
	setDefaults(m, masterOptions)
	return m
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

func (m *Master) apply(raw *ordered.Map, log *slog.Logger) error {
	m.Raw = raw
	r := &reader{raw: raw}
	applyTable(m, masterOptions, r)
	if len(r.errs) > 0 {
		sort.Strings(r.errs)
		return fmt.Errorf("config %s: %s", m.File, strings.Join(r.errs, "; "))
	}
	warnUnknown(log, m.File, unknownKeys(raw, masterOptions))
	m.PKIDir = prependRoot(m.RootDir, m.PKIDir)
	m.CacheDir = prependRoot(m.RootDir, m.CacheDir)
	m.SockDir = prependRoot(m.RootDir, m.SockDir)
	return nil
}

// warnUnknown names, in one warning, the options no table entry reads.
// They stay in Raw, where opts in templates and config.get see them.
func warnUnknown(log *slog.Logger, file string, unknown []string) {
	if len(unknown) > 0 && log != nil {
		log.Warn("keeping options Brine does not use", "file", file, "options", strings.Join(unknown, ", "))
	}
}

// prependRoot places path under root_dir as salt/config/__init__.py
// _prepend_root_dir does, unless it is already there.
func prependRoot(root, path string) string {
	if root == "" || root == "/" || strings.HasPrefix(path, root) || filepath.VolumeName(path) != "" {
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
