package coregrains

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/brinesalt/brine/internal/ordered"
)

// ErrUnsupported is returned by Gather on platforms without a native
// implementation.
var ErrUnsupported = errors.New("grains: core grains are not supported on this platform")

// GatherOptions configures Gather.
type GatherOptions struct {
	// Root is prepended to every file path read (/proc, /sys, /etc); ""
	// means "/". Tests point it at a fixture tree.
	Root string
	// Opts are the minion options: id, master, grains, conf_file,
	// config_dir, enable_fqdns_grains, enable_gpu_grains, append_domain.
	Opts *ordered.Map
	// GrainsFile overrides the static grains file; "" means the file
	// named "grains" beside the minion config (Salt's extra.config).
	GrainsFile string
	// SkipCustom leaves out the grains file and the `grains:` option.
	SkipCustom bool
}

// Result is a set of grains under construction. Gatherers run
// concurrently and each writes its own keys.
type result struct {
	mu sync.Mutex
	m  map[string]any
}

func (r *result) set(kv map[string]any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, v := range kv {
		r.m[k] = v
	}
}

// Gather returns the core grains of this host, merged with the custom
// grains of opts. Keys come out sorted, as Salt's grains outputter
// shows them.
//
// With the grains_cache option (and a cachedir), core grains are reused
// for grains_cache_expiration seconds (default 300), as salt-ssh's
// targets do; custom grains are always read fresh.
func Gather(ctx context.Context, opts GatherOptions) (*ordered.Map, error) {
	cache := opts.cachePath()
	out := opts.loadCache(cache)
	if cache == "" || out == nil {
		core, err := gatherCore(ctx, opts)
		if err != nil {
			return nil, err
		}
		keys := make([]string, 0, len(core))
		for k := range core {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out = ordered.New()
		for _, k := range keys {
			out.Set(k, toValue(core[k]))
		}
		if cache != "" {
			saveCache(cache, out)
		}
	}
	if opts.SkipCustom {
		return out, nil
	}
	if fileGrains, err := LoadFile(opts.grainsFile()); err == nil {
		overlay(out, fileGrains)
	} else if !errors.Is(err, os.ErrNotExist) {
		return out, err
	}
	if g, ok := opts.Opts.Value("grains").(*ordered.Map); ok {
		overlay(out, g)
	}
	return out, nil
}

// overlay replaces top-level keys of dst with those of src, as Salt's
// dict.update does for custom and roster grains.
func overlay(dst, src *ordered.Map) {
	src.Range(func(k, v any) bool { dst.Set(k, v); return true })
}

// Overlay replaces the top-level keys of dst with src's: Salt's semantics
// for roster `grains:` and `ssh_grains` over gathered grains
// (salt/client/ssh/__init__.py).
func Overlay(dst, src *ordered.Map) { overlay(dst, src) }

// ConfigDir returns the minion configuration directory named by opts:
// config_dir, else the directory of conf_file, else /etc/salt.
func ConfigDir(opts *ordered.Map) string {
	if d, ok := opts.Value("config_dir").(string); ok && d != "" {
		return d
	}
	if f, ok := opts.Value("conf_file").(string); ok && f != "" {
		if st, err := os.Stat(f); err == nil && st.IsDir() {
			return f
		}
		return filepath.Dir(f)
	}
	return "/etc/salt"
}

// GrainsFilePath is where grains.setval and friends persist static
// grains: <config_dir>/grains.
func GrainsFilePath(opts *ordered.Map) string {
	return filepath.Join(ConfigDir(opts), "grains")
}

func (o GatherOptions) grainsFile() string {
	if o.GrainsFile != "" {
		return o.GrainsFile
	}
	return GrainsFilePath(o.Opts)
}

func (o GatherOptions) path(p string) string {
	if o.Root == "" || o.Root == "/" {
		return p
	}
	return filepath.Join(o.Root, p)
}

func (o GatherOptions) readFile(p string) (string, error) {
	b, err := os.ReadFile(o.path(p))
	return string(b), err
}

// readTrim reads a small sysfs/proc file and trims whitespace; "" when
// unreadable.
func (o GatherOptions) readTrim(p string) string {
	s, err := o.readFile(p)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(s)
}

func (o GatherOptions) exists(p string) bool {
	_, err := os.Stat(o.path(p))
	return err == nil
}

func (o GatherOptions) optBool(name string, def bool) bool {
	v, ok := o.Opts.Get(name)
	if !ok {
		return def
	}
	b, isBool := v.(bool)
	if !isBool {
		return def
	}
	return b
}

func (o GatherOptions) optString(name string) string {
	s, _ := o.Opts.Value(name).(string)
	return s
}

// toValue turns the gatherers' Go maps into the value model: *ordered.Map
// with sorted keys, recursively.
func toValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		m := ordered.New()
		for _, k := range keys {
			m.Set(k, toValue(x[k]))
		}
		return m
	case []any:
		for i, e := range x {
			x[i] = toValue(e)
		}
		return x
	}
	return v
}

func has(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
