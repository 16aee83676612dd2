package main

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"

	"github.com/brinesalt/brine/internal/config"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/saltyaml"
)

// defaultOpts are the minion defaults salt-call relies on
// (salt/config/__init__.py DEFAULT_MINION_OPTS, the subset Brine uses).
func defaultOpts(configDir string) *ordered.Map {
	host, _ := os.Hostname()
	sp := config.Syspaths
	return ordered.FromPairs(
		"id", host,
		"master", "salt",
		"file_client", "remote",
		"local", false,
		"root_dir", sp.RootDir,
		"cachedir", sp.MinionCacheDir,
		"pki_dir", sp.MinionPKIDir,
		"sock_dir", sp.MinionSockDir,
		"extension_modules", filepath.Join(sp.MinionCacheDir, "extmods"),
		"file_roots", ordered.FromPairs("base", []any{filepath.Join(sp.SrvRootDir, "salt"), filepath.Join(sp.SrvRootDir, "spm", "salt")}),
		"pillar_roots", ordered.FromPairs("base", []any{filepath.Join(sp.SrvRootDir, "pillar"), filepath.Join(sp.SrvRootDir, "spm", "pillar")}),
		"renderer", "jinja|yaml",
		"state_auto_order", true,
		"failhard", false,
		"test", false,
		"saltenv", nil,
		"pillarenv", nil,
		"top_file_merging_strategy", "merge",
		"state_top", "top.sls",
		"log_level", "warning",
		"log_level_logfile", "warning",
		"grains", ordered.New(),
		"config_dir", configDir,
		"conf_file", filepath.Join(configDir, "minion"),
		"default_include", "minion.d/*.conf",
	)
}

// knownOpts are the options Brine reads; others are kept and warned about.
var knownOpts = map[string]bool{}

func init() {
	for _, k := range defaultOpts(config.DefaultDir).Keys() {
		knownOpts[ordered.KeyString(k)] = true
	}
	for _, k := range []string{"log_file", "user", "hash_type", "env_order", "state_output", "state_verbose",
		"output", "color", "retcode_passthrough", "providers", "module_executors", "disable_modules",
		"grains_cache", "ipv6", "append_domain", "enable_fqdns_grains", "enable_gpu_grains"} {
		knownOpts[k] = true
	}
}

// loadConfig reads <dir>/minion and the minion.d/*.conf includes over
// the defaults.
func loadConfig(dir string, log *slog.Logger) (*ordered.Map, error) {
	opts := defaultOpts(dir)
	files := []string{filepath.Join(dir, "minion")}
	inc, _ := filepath.Glob(filepath.Join(dir, "minion.d", "*.conf"))
	sort.Strings(inc)
	files = append(files, inc...)
	for i, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			if i == 0 && os.IsNotExist(err) {
				continue
			}
			return nil, fmt.Errorf("read config %s: %w", f, err)
		}
		v, err := saltyaml.Load(b, f)
		if err != nil {
			return nil, fmt.Errorf("load config %s: %w", f, err)
		}
		m, ok := v.(*ordered.Map)
		if !ok {
			if v == nil {
				continue
			}
			return nil, fmt.Errorf("load config %s: not a mapping", f)
		}
		m.Range(func(k, val any) bool {
			key := ordered.KeyString(k)
			if !knownOpts[key] && log != nil {
				log.Debug("unknown minion option kept", "option", key, "file", f)
			}
			opts.Set(key, val)
			return true
		})
	}
	if id, ok := opts.Value("id").(string); !ok || id == "" {
		host, _ := os.Hostname()
		opts.Set("id", host)
	}
	return opts, nil
}
