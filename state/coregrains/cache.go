package coregrains

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"github.com/brinesalt/brine/internal/ordered"
)

// cacheFile is where core grains are cached under the cachedir option
// when grains_cache is on (Salt keeps grains.cache.p there).
const cacheFile = "grains.cache.json"

// cachePath returns the cache file, or "" when caching is off: Salt's
// grains_cache option, which salt-ssh turns on for its targets.
func (o GatherOptions) cachePath() string {
	if !o.optBool("grains_cache", false) {
		return ""
	}
	dir := o.optString("cachedir")
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, cacheFile)
}

func (o GatherOptions) cacheTTL() time.Duration {
	switch v := o.Opts.Value("grains_cache_expiration").(type) {
	case int:
		return time.Duration(v) * time.Second
	case float64:
		return time.Duration(v * float64(time.Second))
	}
	return 300 * time.Second
}

// loadCache returns cached core grains younger than the expiration, with
// the per-process grains (pid, cwd) refreshed.
func (o GatherOptions) loadCache(path string) *ordered.Map {
	st, err := os.Stat(path)
	if err != nil || time.Since(st.ModTime()) > o.cacheTTL() {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	v, err := ordered.DecodeJSON(bytes.NewReader(b))
	m, ok := v.(*ordered.Map)
	if err != nil || !ok || m.Value("id") != o.optString("id") {
		return nil
	}
	m.Set("pid", os.Getpid())
	if wd, err := os.Getwd(); err == nil {
		m.Set("cwd", wd)
	}
	return m
}

// saveCache writes the core grains; failures only cost the next run a
// fresh gather.
func saveCache(path string, m *ordered.Map) {
	b, err := json.Marshal(m)
	if err != nil {
		return
	}
	if os.MkdirAll(filepath.Dir(path), 0o700) != nil {
		return
	}
	tmp := path + ".tmp"
	if os.WriteFile(tmp, b, 0o600) == nil {
		_ = os.Rename(tmp, path)
	}
}
