// Package sqlreturners registers the database returners, mysql,
// pgjsonb and postgres_local_cache, for the minion's side: `salt
// --return mysql`, the minion's own return option and ext_job_cache, a
// schedule's returner. Each
// return is written before the call ends (no spool: a failure is the
// minion's to log), through a connection pool kept per set of
// connection options, as Salt's mysql returner keeps its connection in
// __context__. A package of its own so that the thin's core flavor,
// which links no minion, links no database driver either.
package sqlreturners

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/brinesalt/brine/internal/jobcache"
	"github.com/brinesalt/brine/internal/jobcache/sqlcache"
	"github.com/brinesalt/brine/internal/ordered"
	"github.com/brinesalt/brine/state/modules"
	"github.com/brinesalt/brine/state/returners"
)

func init() {
	for _, name := range []string{"mysql", "pgjsonb", "postgres_local_cache"} {
		returners.Default.Register(name, returner(name))
	}
}

// writeTimeout bounds one returner call.
const writeTimeout = time.Minute

// pools are the open stores by returner and connection options.
var pools = struct {
	mu sync.Mutex
	m  map[string]jobcache.Store
}{m: map[string]jobcache.Store{}}

// returner is the returner(ret) of a database returner.
func returner(name string) returners.Func {
	return func(ctx context.Context, env *modules.Env, ret *ordered.Map) error {
		// The write outlives the job's context, as Salt's returner runs
		// to its end in the job's thread, but not for ever.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
		defer cancel()
		o := sqlcache.Options(name, returners.Lookup(env), ret)
		st, err := store(ctx, name, o, env)
		if err != nil {
			return err
		}
		return st.Returner(ctx, ret)
	}
}

// store returns the pool for these options, opening it the first time.
func store(ctx context.Context, name string, o map[string]any, env *modules.Env) (jobcache.Store, error) {
	key := poolKey(name, o)
	pools.mu.Lock()
	defer pools.mu.Unlock()
	if st, ok := pools.m[key]; ok {
		return st, nil
	}
	id, _ := env.Opts.Value("id").(string)
	cfg := jobcache.Config{Options: o, Direct: true, MasterID: id}
	if env.Log != nil {
		cfg.Log = env.Log
	}
	st, err := jobcache.Open(ctx, name, cfg)
	if err != nil {
		return nil, err
	}
	pools.m[key] = st
	return st, nil
}

// poolKey is the options in a stable order; it stays in memory.
func poolKey(name string, o map[string]any) string {
	keys := make([]string, 0, len(o))
	for k := range o {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(name)
	for _, k := range keys {
		fmt.Fprintf(&b, "\x00%s=%v", k, o[k])
	}
	return b.String()
}
