package mine

import (
	"os"
	"path/filepath"

	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/internal/protocol"
	"github.com/brinesalt/brine/state/modules"
)

// The masterless mine is the mine_cache key of the minion's datastore,
// <cachedir>/datastore, a msgpack mapping (salt/modules/data.py, which
// Salt's mine module calls as data.get and data.update).

func datastorePath(env *modules.Env) string {
	dir, _ := env.Opts.Value("cachedir").(string)
	if dir == "" {
		dir = modules.DefaultCachedir
	}
	return filepath.Join(dir, "datastore")
}

func loadDatastore(env *modules.Env) *ordered.Map {
	b, err := os.ReadFile(datastorePath(env))
	if err != nil {
		return ordered.New()
	}
	v, err := protocol.Unmarshal(b)
	if m, ok := v.(*ordered.Map); err == nil && ok {
		return m
	}
	return ordered.New()
}

// loadCache is data.get("mine_cache"): the mapping, ok false when there
// is none.
func loadCache(env *modules.Env) (*ordered.Map, bool) {
	m, ok := loadDatastore(env).Value("mine_cache").(*ordered.Map)
	return m, ok
}

// saveCache is data.update("mine_cache", data): True once written.
func saveCache(env *modules.Env, data *ordered.Map) (any, error) {
	all := loadDatastore(env)
	all.Set("mine_cache", data)
	b, err := protocol.Marshal(all)
	if err != nil {
		return nil, modules.Errorf("mine: %s", err.Error())
	}
	path := datastorePath(env)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, modules.Errorf("mine: %s", err.Error())
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return nil, modules.Errorf("mine: %s", err.Error())
	}
	return true, nil
}
